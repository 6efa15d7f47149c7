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

  /// The text of a Markdown chapter, up to the next `## ` heading.
  static func section(in file: String, chapter: String) throws -> String {
    let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
    return try #require(text.components(separatedBy: "\n\(chapter)\n").dropFirst().first, "\(file): \(chapter)")
      .components(separatedBy: "\n## ").first ?? ""
  }

  /// `| 10 | meaning | yes | yes |` rows of a Markdown chapter.
  static func rows(in file: String, chapter: String) throws -> [[String]] {
    let body = try section(in: file, chapter: chapter)
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

  /// Apps/Tasker/README.md's table is the rows `tasker` returns, with the
  /// same meanings, in order.
  @Test func taskerReadmeTableIsTheTaskerRows() throws {
    let documented = try Self.rows(in: "Apps/Tasker/README.md", chapter: "### Exit codes")
    let expected = ExitCode.allCases.filter { $0.users.contains(.tasker) }.map { [String($0.rawValue), $0.summary] }
    #expect(documented == expected)
  }

  /// README.md has no table of its own: every number its exit-code
  /// paragraph names is a code of the table.
  @Test func readmeNamesOnlyCodesOfTheTable() throws {
    let paragraph =
      try Self.section(in: "README.md", chapter: "### Exit codes").components(separatedBy: "\n#").first ?? ""
    // The link to §11 is not a code.
    let text = paragraph.replacing("§11", with: "").replacing("#11-exit-codes", with: "")
    let numbers = text.split { !$0.isNumber }.compactMap { Int32($0) }
    #expect(numbers.count >= 8, "\(numbers)")
    for number in numbers { #expect(ExitCode(rawValue: number) != nil, "README.md names exit code \(number)") }
  }

  @Test func everyNumberHasOneMeaningAndEveryCodeAUser() {
    let numbers = ExitCode.allCases.map(\.rawValue)
    #expect(Set(numbers).count == numbers.count)
    #expect(Set(ExitCode.allCases.map(\.summary)).count == numbers.count)
    for code in ExitCode.allCases { #expect(!code.users.isEmpty, "\(code) is returned by no command") }
  }
}
