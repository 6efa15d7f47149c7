import Foundation
import TaskKeyTestSupport
import Testing

@Suite("taskkey completion")
struct CompletionCommandTests {
  /// The command names `taskkey --help` lists under SUBCOMMANDS.
  func helpCommands() throws -> [String] {
    let help = try TaskKeyBinary.run(["--help"]).stdoutText
    let section = try #require(help.components(separatedBy: "SUBCOMMANDS:\n").last)
    return section.components(separatedBy: "\n\n")[0].split(separator: "\n").map {
      String($0.drop { $0 == " " }.prefix { $0 != " " })
    }
  }

  @Test func bashCompletionIsValidBashAndNamesEveryCommand() throws {
    let result = try TaskKeyBinary.run(["completion", "bash"])
    #expect(result.status == 0)
    let home = try TemporaryDirectory()
    try result.stdoutText.write(toFile: home.path("taskkey.bash"), atomically: true, encoding: .utf8)
    let bash = Process()
    bash.executableURL = URL(fileURLWithPath: "/bin/bash")
    bash.arguments = ["-n", home.path("taskkey.bash")]
    try bash.run()
    bash.waitUntilExit()
    #expect(bash.terminationStatus == 0)
    let commands = try helpCommands()
    #expect(commands.count >= 5)
    for command in commands {
      #expect(result.stdoutText.contains("    \(command)) words="), "\(command) missing from completion")
    }
    #expect(
      result.stdoutText.contains(
        "seal) words=\"--context --key-file --exact --help --field --context-field --input --out\""))
  }

  @Test func manPageHasTheStandardSectionsAndEveryCommand() throws {
    let result = try TaskKeyBinary.run(["completion", "man"])
    #expect(result.status == 0)
    let page = result.stdoutText
    for section in [".TH TASKKEY 1", ".SH NAME", ".SH SYNOPSIS", ".SH COMMANDS", ".SH EXIT STATUS"] {
      #expect(page.contains(section))
    }
    for command in try helpCommands() {
      #expect(page.contains(".SS \(command)\n"), "\(command) missing from the man page")
    }
    #expect(page.contains("77\tunsafe file permissions"))
  }

  @Test func unknownKindIsAUsageError() throws {
    let result = try TaskKeyBinary.run(["completion", "zsh"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("usage: taskkey completion bash|man"))
  }
}
