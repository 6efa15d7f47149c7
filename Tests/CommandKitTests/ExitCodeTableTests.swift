import CommandKit
import Foundation
import Testing

/// The one exit-code table (issue 21, goal 2): SECURITY.md §11 is the table
/// of `ExitCode` row for row, with the programs that return each code; a
/// number cannot have two meanings (the enum's raw values are unique, and
/// the documented rows must match it exactly).
@Suite("One exit-code table")
struct ExitCodeTableTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// `| 10 | meaning | yes | yes |` rows of a Markdown chapter.
  static func rows(in file: String, chapter: String) throws -> [[String]] {
    let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
    let body =
      try #require(text.components(separatedBy: "\n\(chapter)\n").dropFirst().first)
      .components(separatedBy: "\n## ").first ?? ""
    return body.split(separator: "\n").filter { $0.hasPrefix("| ") && $0.dropFirst(2).first?.isNumber == true }
      .map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
  }

  static func expected(_ code: ExitCode) -> [String] {
    [
      String(code.rawValue), code.summary, code.users.contains(.taskkey) ? "yes" : "—",
      code.users.contains(.tasker) ? "yes" : "—",
    ]
  }

  @Test func securityChapterIsTheTable() throws {
    let documented = try Self.rows(in: "SECURITY.md", chapter: "## 11. Exit codes")
    #expect(documented == ExitCode.allCases.map(Self.expected))
  }

  @Test func everyNumberHasOneMeaningAndEveryCodeAUser() {
    let numbers = ExitCode.allCases.map(\.rawValue)
    #expect(Set(numbers).count == numbers.count)
    #expect(Set(ExitCode.allCases.map(\.summary)).count == numbers.count)
    for code in ExitCode.allCases { #expect(!code.users.isEmpty, "\(code) is returned by no command") }
  }
}
