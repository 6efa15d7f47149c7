import Foundation
import TaskKeyTestSupport
import Testing

/// The conventions every `taskkey` command keeps, checked for every command
/// that `taskkey --help` lists, so a new command cannot skip them.
@Suite("CLI conventions for every command")
struct CLIConventionsTests {
  static func commands() throws -> [String] {
    let help = try TaskKeyBinary.run(["--help"]).stdoutText
    guard let section = help.components(separatedBy: "SUBCOMMANDS:\n").last else { return [] }
    return section.components(separatedBy: "\n\n")[0].split(separator: "\n").map {
      String($0.drop { $0 == " " }.prefix { $0 != " " })
    }
  }

  @Test func everyCommandHasHelpInTheFamiliarShapeOnStdout() throws {
    let commands = try Self.commands()
    #expect(commands.count >= 15, "\(commands)")
    for command in commands {
      for flag in ["--help", "-h"] {
        let result = try TaskKeyBinary.run([command, flag])
        #expect(result.status == 0, "\(command) \(flag)")
        #expect(result.stderr.isEmpty, "\(command) \(flag) wrote to stderr")
        for section in ["OVERVIEW: ", "USAGE: taskkey \(command)", "OPTIONS:", "EXAMPLE:"] {
          #expect(result.stdoutText.contains(section), "\(command) --help lacks '\(section)'")
        }
        let example = result.stdoutText.components(separatedBy: "EXAMPLE:").last ?? ""
        #expect(example.contains("taskkey \(command)"), "\(command) --help has no example of itself")
      }
      let viaHelp = try TaskKeyBinary.run(["help", command])
      #expect(viaHelp.stdoutText == (try TaskKeyBinary.run([command, "--help"])).stdoutText)
    }
  }

  @Test func unknownOptionsAreOneLineUsageErrorsWithExit64() throws {
    let home = try TemporaryDirectory()
    for command in try Self.commands() {
      let result = try TaskKeyBinary.run(
        [command, "--no-such-option"], environment: ["TASKKEY_HOME": home.path("keys")])
      #expect(result.status == 64, "\(command): \(result.stderr)")
      #expect(result.stdout.isEmpty, "\(command) wrote to stdout on a usage error")
      let lines = result.stderr.split(separator: "\n")
      #expect(lines.count == 2, "\(command): \(result.stderr)")
      #expect(lines.first?.hasPrefix("taskkey: error: ") == true, "\(command)")
      #expect(lines.last?.hasPrefix("hint: usage: taskkey \(command)") == true, "\(command): \(result.stderr)")
    }
  }

  /// SECURITY.md holds the one exit-code table; its rows marked for
  /// taskkey must be the binary's own lines, in order, none missing and
  /// none extra.
  @Test func securityExitCodeTableMatchesTheBinary() throws {
    let security = try String(
      contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SECURITY.md"), encoding: .utf8)
    let chapter =
      try #require(security.components(separatedBy: "\n## 11. Exit codes\n").last)
      .components(separatedBy: "\n## ").first ?? ""
    // The project's table: | code | meaning | taskkey | tasker |; taskkey's
    // help prints the rows marked for it.
    let documented = chapter.split(separator: "\n").filter { $0.hasPrefix("| ") }
      .filter { $0.dropFirst(2).first?.isNumber == true }
      .map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
      .filter { $0.count == 4 && $0[2] == "yes" }.map { "| \($0[0]) | \($0[1]) |" }
    let help = try TaskKeyBinary.run(["--help"]).stdoutText
    let table = try #require(help.components(separatedBy: "EXIT CODES:\n").last)
    let expected = table.split(separator: "\n").map { line -> String in
      let trimmed = line.drop { $0 == " " }
      let code = trimmed.prefix { $0 != " " }
      let meaning = trimmed.dropFirst(code.count).drop { $0 == " " }
      return "| \(code) | \(meaning) |"
    }
    #expect(documented == expected)
  }

  @Test func versionAndTopLevelHelp() throws {
    #expect(
      try TaskKeyBinary.run(["--version"]).stdoutText.range(
        of: #"^taskkey \d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil)
    let bare = try TaskKeyBinary.run([])
    #expect(bare.status == 64)
    #expect(bare.stdout.isEmpty)
    #expect(bare.stderr.contains("USAGE: taskkey <command>"))
  }
}
