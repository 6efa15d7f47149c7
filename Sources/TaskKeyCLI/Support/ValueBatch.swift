import Foundation
import TaskCrypto

/// How `rewrap` and `retire` read a batch of stored values: one per line, or
/// JSON lines with the value (and optionally its context) in named fields.
struct ValueBatch {
  /// The largest batch read from standard input or a file: 256 MiB.
  static let byteLimit = 256 << 20

  static let contextOption = OptionSpec.value(
    "--context", short: "c", "C", help: "The context of every value (default: empty).")
  static let fieldOption = OptionSpec.value(
    "--field", "F",
    help: "Input is JSON lines; the value is the string in field F of each object (null or missing: left alone).")
  static let contextFieldOption = OptionSpec.value(
    "--context-field", "G",
    help: "With --field: each value's context is the string in field G of its object (for example "
      + "\"note/<id>/body\").")
  static let options = [contextOption, fieldOption, contextFieldOption]

  var field: String?
  var contextField: String?
  var context: String

  init(_ arguments: ParsedArguments) throws {
    field = arguments.value(Self.fieldOption)
    contextField = arguments.value(Self.contextFieldOption)
    let fixed = arguments.value(Self.contextOption)
    if contextField != nil && field == nil { throw arguments.usageError("--context-field needs --field") }
    if contextField != nil && fixed != nil { throw arguments.usageError("give --context or --context-field, not both") }
    context = fixed ?? ""
  }

  /// One input line: the value found in it, its context, and how to put a
  /// new value back.
  struct Line {
    var number: Int
    var value: String?
    var context: String
    var object: [String: Any]?
    var raw: String
  }

  /// Splits input into lines (a final newline ends the last line, it does
  /// not start another) and finds each value. A line that is not UTF-8 is
  /// refused, never repaired: it would be written back with other bytes.
  ///
  /// - Throws: `CLIError.malformedInput` naming the line.
  func lines(of input: [UInt8]) throws -> [Line] {
    guard var text = String(validating: input, as: UTF8.self) else {
      let lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
      let bad = lines.firstIndex { String(validating: $0, as: UTF8.self) == nil } ?? 0
      throw CLIError.malformedInput(line: bad + 1, reason: "not valid UTF-8; nothing was changed")
    }
    if text.hasSuffix("\n") { text.removeLast() }
    guard !input.isEmpty else { return [] }
    return try text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, raw in
      let number = index + 1
      guard let field else {
        return Line(number: number, value: String(raw), context: context, object: nil, raw: String(raw))
      }
      guard let data = raw.data(using: .utf8),
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
      else { throw CLIError.malformedInput(line: number, reason: "not a JSON object") }
      var lineContext = context
      if let contextField {
        guard let found = object[contextField] as? String else {
          throw CLIError.malformedInput(line: number, reason: "field '\(contextField)' is not a string")
        }
        lineContext = found
      }
      switch object[field] {
      case nil, is NSNull:
        return Line(number: number, value: nil, context: lineContext, object: object, raw: String(raw))
      case let value as String:
        return Line(number: number, value: value, context: lineContext, object: object, raw: String(raw))
      default:
        throw CLIError.malformedInput(line: number, reason: "field '\(field)' is not a string")
      }
    }
  }

  /// The line with `newValue` in place of its value.
  func render(_ line: Line, newValue: String) throws -> String {
    guard let field, var object = line.object else { return newValue }
    object[field] = newValue
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self)
  }
}

/// Draws `label [####      ] n/total` on standard error when it is a
/// terminal (and not `-q`), and nothing when it is piped or redirected.
struct ProgressBar {
  let total: Int
  let label: String
  private var shown = -1

  init(total: Int, label: String) {
    self.total = total
    self.label = label
  }

  mutating func update(_ done: Int, _ streams: StandardStreams) {
    guard total > 0 else { return }
    let percent = done * 100 / total
    guard percent != shown else { return }
    shown = percent
    let filled = percent * 30 / 100
    let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
    streams.progress("\(label) [\(bar)] \(done)/\(total)", done: done == total)
  }
}
