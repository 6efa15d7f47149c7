import CommandKit
import Foundation
import Testing

@testable import TaskKeyCLI

/// The binary's own JSON writer and time text (issue 14, goal 6: the
/// `taskkey` binary no longer links Foundation's `JSONSerialization` and
/// date formatters) give the bytes those gave.
@Suite("Output without Foundation's formatters")
struct FoundationFreeOutputTests {
  @Test func jsonValueWritesWhatJSONSerializationWrote() throws {
    let texts = [
      "plain", "quote \" and backslash \\", "a/b/c", "tab\tnew\nline\rcr", "\u{1}\u{8}\u{c}\u{1f}\u{7f}",
      "caf\u{E9} \u{1F600} \u{2028}", "",
    ]
    let value = JSONValue.object([
      "texts": .strings(texts), "count": .int(-42), "none": .null, "overlap_until": .optional(nil as String?),
      "nested": .array([.object(["b": .int(1), "a": .optional("x")])]), "files_failed": .int(0), "files": .int(7),
    ])
    let object: [String: Any] = [
      "texts": texts, "count": -42, "none": NSNull(), "overlap_until": NSNull(),
      "nested": [["b": 1, "a": "x"]], "files_failed": 0, "files": 7,
    ]
    let expected = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    #expect(value.text == String(decoding: expected, as: UTF8.self))
  }

  @Test func isoTimeIsWhatISO8601DateFormatterWrote() {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    var seconds = -2_208_988_800.0  // 1900-01-01
    while seconds < 7_258_118_400 {  // 2200-01-01
      let date = Date(timeIntervalSince1970: seconds)
      #expect(isoTime(date) == formatter.string(from: date))
      #expect(isoTime(date.addingTimeInterval(0.999)) == formatter.string(from: date.addingTimeInterval(0.999)))
      seconds += 86_400 * 97 + 3_671
    }
  }

  @Test func paddingCutsOrFillsToTheWidth() {
    #expect(padded("ab", to: 4) == "ab  ")
    #expect(padded("abcdef", to: 4) == "abcd")
    #expect(padded("", to: 0).isEmpty)
  }
}

/// `TaskKeyMain.commandNames` (what finds a command without building every
/// spec) lists exactly the commands' own names, in order.
@Suite("Command lookup")
struct CommandLookupTests {
  @Test func theNameTableMatchesTheCommandsSpecs() {
    #expect(TaskKeyMain.commandNames == TaskKeyMain.commands.map { $0.spec.name })
  }
}
