import Foundation
import TaskerTestSupport
import Testing

/// `tasker --help` prints its exit codes from the project's one table
/// (issue 21, goal 2): its EXIT CODES rows are exactly SECURITY.md §11's
/// rows whose tasker column says yes, in order, none missing and none
/// extra.
@Suite("tasker exit codes in help")
struct ExitCodeHelpTests {
  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  @Test func helpExitCodesAreTheTablesTaskerRows() throws {
    let security = try String(contentsOf: Self.repository.appendingPathComponent("SECURITY.md"), encoding: .utf8)
    let chapter =
      try #require(security.components(separatedBy: "\n## 11. Exit codes\n").dropFirst().first)
      .components(separatedBy: "\n## ").first ?? ""
    // | code | meaning | taskkey | tasker |
    let documented = chapter.split(separator: "\n").filter {
      $0.hasPrefix("| ") && $0.dropFirst(2).first?.isNumber == true
    }
    .map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
    .filter { $0.count == 4 && $0[3] == "yes" }.map { "| \($0[0]) | \($0[1]) |" }
    #expect(documented.count > 20, "\(documented)")
    let help = try Binary.tasker.run(["--help"])
    #expect(help.status == 0)
    let table = try #require(help.stdoutText.components(separatedBy: "EXIT CODES:\n").dropFirst().first)
    let printed = table.components(separatedBy: "\n\n")[0].split(separator: "\n").map { line -> String in
      let trimmed = line.drop { $0 == " " }
      let code = trimmed.prefix { $0 != " " }
      return "| \(code) | \(trimmed.dropFirst(code.count).drop { $0 == " " }) |"
    }
    #expect(printed == documented)
  }

  /// The numbers issue 21 moved, as a user meets them.
  @Test func movedCodesAsAUserMeetsThem() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "first"]).status == 0)
    #expect(try device.tasker(["show", "42"]).status == 19, "not found")
    #expect(try device.tasker(["add", "x", "--due", "someday"]).status == 64, "a bad option value")
    #expect(try device.tasker(["approvals", "approve", "7"]).status == 19, "no such approval")
    let file = device.root.path("results.txt")
    try "results\n".write(toFile: file, atomically: true, encoding: .utf8)
    #expect(try device.tasker(["attach", "add", "--task", "1", file]).status == 0)
    let existing = try device.tasker(["attach", "get", "1", "--out", file])
    #expect(existing.status != 0 && existing.stdout.isEmpty)
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "results\n", "nothing was overwritten")
    // SECURITY.md §11: an existing --out is 73, as in taskkey.
    #expect(existing.status == 73, "\(existing.status): \(existing.stderr)")
  }
}
