import Foundation
import TaskKeyTestSupport
import Testing

/// The shell completions and the man page, printed from the same command
/// declarations as `--help`: every command path and option is in them.
@Suite("taskkey completion")
struct CompletionCommandTests {
  /// Every command path (`item set`) and its options, read from `--help`.
  static func commandPaths() throws -> [(path: [String], options: [String])] {
    func walk(_ path: [String]) throws -> [(path: [String], options: [String])] {
      let help = try TaskKeyBinary.run(path + ["--help"]).stdoutText
      let options = help.components(separatedBy: "OPTIONS:\n").last!.components(separatedBy: "\n\n")[0]
        .split(separator: "\n").filter { $0.hasPrefix("  -") }.compactMap { line -> String? in
          let words = line.split(separator: " ").map(String.init)
          return words.first { $0.hasPrefix("--") }.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
        }
      var result = [(path, options)]
      if let section = help.components(separatedBy: "SUBCOMMANDS:\n").dropFirst().first {
        // One line per subcommand, never wrapped.
        for line in section.components(separatedBy: "\n\n")[0].split(separator: "\n") where path.count < 3 {
          result += try walk(path + [String(line.drop { $0 == " " }.prefix { $0 != " " })])
        }
      }
      return result
    }
    let top = try TaskKeyBinary.run(["--help"]).stdoutText
    let names = top.components(separatedBy: "SUBCOMMANDS:\n").last!.components(separatedBy: "\n\n")[0]
      .split(separator: "\n").map { String($0.drop { $0 == " " }.prefix { $0 != " " }) }
    return try names.flatMap { try walk([$0]) }
  }

  static func shell(_ name: String) -> String? {
    ["/usr/bin/\(name)", "/bin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) }
  }

  @Test func everyCommandPathAndOptionIsInEveryScript() throws {
    let paths = try Self.commandPaths()
    #expect(paths.count >= 30, "\(paths.map(\.path))")
    #expect(paths.contains { $0.path == ["item", "set"] } && paths.contains { $0.path == ["sync", "import"] })
    for shell in ["bash", "zsh", "fish"] {
      let script = try TaskKeyBinary.run(["completion", shell])
      #expect(script.status == 0)
      for (path, options) in paths {
        let words = path.joined(separator: " ")
        #expect(script.stdoutText.contains(words), "\(shell): \(words) missing")
        for option in options {
          let spelled = shell == "fish" ? "-l \(option.dropFirst(2))" : option
          #expect(script.stdoutText.contains(spelled), "\(shell): \(words) \(option) missing")
        }
      }
      if shell != "fish" { #expect(!script.stdoutText.contains("KID"), "\(shell) offers a placeholder") }
    }
  }

  @Test func scriptsAreValidInTheirShell() throws {
    for (shell, flag) in [("bash", "-n"), ("zsh", "-n"), ("fish", "--no-execute")] {
      guard let path = Self.shell(shell) else {
        // `make completion-shells` installs zsh and fish; CI runs it.
        Issue.record("\(shell) is not installed; run 'make completion-shells'")
        continue
      }
      let home = try TemporaryDirectory()
      try TaskKeyBinary.run(["completion", shell]).stdoutText.write(
        toFile: home.path("script"), atomically: true, encoding: .utf8)
      let process = Process()
      process.executableURL = URL(fileURLWithPath: path)
      process.arguments = [flag, home.path("script")]
      try process.run()
      process.waitUntilExit()
      #expect(process.terminationStatus == 0, "\(shell) \(flag) refused the script")
    }
  }

  @Test func fishCompletesSubcommandsOptionsAndChoices() throws {
    guard let fish = Self.shell("fish") else {
      Issue.record("fish is not installed; run 'make completion-shells'")
      return
    }
    let home = try TemporaryDirectory()
    try TaskKeyBinary.run(["completion", "fish"]).stdoutText.write(
      toFile: home.path("taskkey.fish"), atomically: true, encoding: .utf8)
    func complete(_ line: String) throws -> String {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: fish)
      process.arguments = ["--no-config", "-c", "source \(home.path("taskkey.fish")); complete -C '\(line)'"]
      let output = Pipe()
      process.standardOutput = output
      try process.run()
      let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      return text
    }
    #expect(try complete("taskkey it").hasPrefix("item\t"))
    #expect(try complete("taskkey item s").hasPrefix("set\t"))
    #expect(try complete("taskkey sync e").hasPrefix("export\t"))
    #expect(try complete("taskkey sync export --o").contains("--out"))
    #expect(try complete("taskkey init --kdf f").contains("fast-test-only"))
  }

  @Test func manPageHasTheStandardSectionsAndEveryCommand() throws {
    let result = try TaskKeyBinary.run(["completion", "man"])
    #expect(result.status == 0)
    let page = result.stdoutText
    for section in [
      ".TH TASKKEY 1", ".SH NAME", ".SH SYNOPSIS", ".SH COMMANDS", ".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH FILES",
      ".SH SEE ALSO",
    ] {
      #expect(page.contains(section), "\(section) missing")
    }
    for (path, _) in try Self.commandPaths() {
      #expect(page.contains(".SS \(path.joined(separator: " "))\n"), "\(path) missing from the man page")
    }
    for variable in ["TASKKEY_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "TZ"] {
      #expect(page.contains(".B \(variable)"))
    }
    for file in ["vault.tkv", "device\\-only/", "CACHEDIR.TAG", "\\-\\-exclude\\-caches"] {
      #expect(page.contains(file), "FILES lacks \(file)")
    }
    let seeAlso = try #require(page.components(separatedBy: ".SH SEE ALSO").last)
    #expect(!seeAlso.contains(".md") && !seeAlso.contains("Sources/"), "SEE ALSO names files that are not installed")
    #expect(page.contains("73\twill not overwrite"))
  }

  @Test func unknownKindIsAUsageErrorWithASuggestion() throws {
    let result = try TaskKeyBinary.run(["completion", "zhs"])
    #expect(result.status == 64)
    #expect(result.stderr.contains("did you mean 'zsh'?"))
  }

  @Test func wordsPrintNothingWhenLockedAndNeverPrompt() throws {
    let vault = try CLIVault(unlock: false)
    for source in ["note-key-ids", "assistant-names", "assistant-key-ids", "item-names"] {
      let result = try TaskKeyBinary.run(
        ["completion", "words", source], environment: ["TASKKEY_HOME": vault.directory], detached: true)
      #expect(result.status == 0)
      #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(source): \(result.stderr)")
    }
  }
}
