import Foundation
import TaskKeyTestSupport
import Testing

/// Completion as a person meets it: an interactive shell on a real
/// pseudo-terminal (scripts/pty-drive.py), the script sourced, words typed
/// with TAB, and what the terminal shows checked.
@Suite("Completion typed into a real terminal")
struct CompletionTerminalTests {
  /// Types `steps` into `shell` on a pseudo-terminal (standard input,
  /// output and error all the terminal) and returns what it showed.
  func type(
    _ shell: [String], steps: [(expect: String, send: String)], environment: [String: String],
    home: TemporaryDirectory
  ) throws -> String {
    try TerminalDriver.drive(command: shell, environment: environment, home: home, steps: steps, interactive: true)
      .terminal
  }

  /// A vault with a second note key, an assistant and an item, and a file
  /// to complete.
  func fixture() throws -> (vault: CLIVault, keys: [String], assistantID: String) {
    let vault = try CLIVault()
    #expect(try vault.run(["rotate"]).status == 0)
    #expect(try vault.run(["mint", "--name", "helper-bot"]).status == 0)
    #expect(try vault.run(["item", "set", "provider/openai", "--device-only"], text: "sk-test").status == 0)
    try "x".write(toFile: vault.home.path("notes-file.jsonl"), atomically: true, encoding: .utf8)
    let keys = try JSONSerialization.jsonObject(with: Data(vault.run(["keys", "--json"]).stdout)) as? [String: Any]
    let ids = (keys?["keys"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    let listed = try vault.run(["list", "--json"]).stdoutText
    let id = listed.range(of: #"tkid_[0-9a-f]{16}"#, options: .regularExpression).map { String(listed[$0]) } ?? "?"
    return (vault, ids, id)
  }

  /// The environment of the shell: the built binary on PATH, the vault.
  func environment(_ vault: CLIVault) -> [String: String] {
    [
      "PATH": TaskKeyBinary.url.deletingLastPathComponent().path + ":/usr/bin:/bin", "TASKKEY_HOME": vault.directory,
      "HOME": vault.home.path(""), "TERM": "dumb", "LANG": "C.UTF-8", "INPUTRC": "/dev/null", "PS1": "$ ",
    ]
  }

  @Test func bashCompletesCommandsSubcommandsOptionsFilesIdsAndNames() throws {
    let (vault, keys, assistantID) = try fixture()
    let script = vault.home.path("taskkey.bash")
    try TaskKeyBinary.run(["completion", "bash"]).stdoutText.write(toFile: script, atomically: true, encoding: .utf8)
    let clear = "\u{15}"  // Ctrl-U: drop the line typed so far
    let files = vault.home.path("notes-f")
    let steps: [(expect: String, send: String)] = [
      ("$ ", "bind 'set show-all-if-ambiguous on'; source \(script)\n"),
      ("$ ", "taskkey it\t"), ("taskkey item ", "s\t"), ("taskkey item set ", clear),
      ("$ ", "taskkey sync e\t"), ("taskkey sync export ", "--o\t"), ("--out ", clear),
      ("$ ", "taskkey backup c\t"), ("backup create ", clear),
      ("$ ", "taskkey statu\t"), ("taskkey status ", clear),
      ("$ ", "taskkey retire --input \(files)\t"), ("notes-file.jsonl ", clear),
      ("$ ", "taskkey init --kdf f\t"), ("fast-test-only ", clear),
      // Two TABs: when the random key ids share a first character, the
      // first TAB only inserts it and the second lists them.
      ("$ ", "taskkey promote \t\t"), (keys.last ?? "?", clear),
      ("$ ", "taskkey rotate --assistant h\t"), ("helper-bot ", clear),
      ("$ ", "taskkey revoke t\t"), (assistantID, clear),
      ("$ ", "taskkey item get p\t"), ("provider/openai ", clear),
      ("$ ", "exit\n"),
    ]
    let started = Date()
    let terminal = try type(
      ["/bin/bash", "--norc", "--noprofile", "-i"], steps: steps, environment: environment(vault), home: vault.home)
    for expected in [
      "taskkey item set ", "taskkey sync export --out ", "taskkey backup create ", "taskkey status ",
      "notes-file.jsonl ", "--kdf fast-test-only ", "--assistant helper-bot ", "item get provider/openai ",
    ] + keys + [assistantID] {
      #expect(terminal.contains(expected), "the terminal never showed '\(expected)':\n\(terminal)")
    }
    #expect(!terminal.contains("KID"), "a placeholder was offered")
    #expect(Date().timeIntervalSince(started) < 30)
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh"), "zsh is not installed; skipped"))
  func zshCompletesCommandsSubcommandsOptionsIdsAndNames() throws {
    let (vault, keys, _) = try fixture()
    let folder = vault.home.path("zsh-completions")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    try TaskKeyBinary.run(["completion", "zsh"]).stdoutText.write(
      toFile: folder + "/_taskkey", atomically: true, encoding: .utf8)
    let clear = "\u{15}"
    let steps: [(expect: String, send: String)] = [
      ("$ ", "fpath=(\(folder) $fpath); autoload -U compinit; compinit -u\n"),
      ("$ ", "taskkey sy\t"), ("taskkey sync ", "e\t"), ("export ", clear),
      ("$ ", "taskkey rotate --assistant h\t"), ("helper-bot ", clear),
      // Two TABs: when the random key ids share a first character, the
      // first TAB only inserts it and the second lists them.
      ("$ ", "taskkey promote \t\t"), (keys.last ?? "?", clear),
      ("$ ", "exit\n"),
    ]
    let terminal = try type(
      ["/usr/bin/zsh", "-f", "-i"], steps: steps, environment: environment(vault), home: vault.home)
    // zsh redraws a completed word after a backspace: "sync \u{8} export".
    for expected in ["taskkey sync ", " export ", "--assistant helper-bot "] + keys {
      #expect(terminal.contains(expected), "the terminal never showed '\(expected)':\n\(terminal)")
    }
  }

  @Test func bashOffersNoIdsAndNeverPromptsWhenLocked() throws {
    let vault = try CLIVault(unlock: false)
    let script = vault.home.path("taskkey.bash")
    try TaskKeyBinary.run(["completion", "bash"]).stdoutText.write(toFile: script, atomically: true, encoding: .utf8)
    let started = Date()
    let terminal = try type(
      ["/bin/bash", "--norc", "--noprofile", "-i"],
      steps: [
        ("$ ", "source \(script)\n"), ("$ ", "taskkey retire \t\t"), ("retire ", "\u{15}"), ("$ ", "exit\n"),
      ],
      environment: environment(vault), home: vault.home)
    #expect(!terminal.lowercased().contains("passphrase"), "\(terminal)")
    #expect(Date().timeIntervalSince(started) < 15, "completion was slow")
  }
}
