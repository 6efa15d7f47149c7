import Foundation
import TaskKeyTestSupport
import Testing

/// TaskKey used for a day, as a person and a script would (issue 12):
/// note keys listed and promoted, a second device joining, init and
/// export doing cheap checks first, markers put back, durations, times,
/// short flags, suggestions and one JSON style.
@Suite("Daily use of taskkey")
struct DailyUseTests {
  func json(_ result: ProcessResult) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any], "\(result.stderr)")
  }

  /// The README's first screen promises `make demo`; its taskkey part
  /// (scripts/demo.sh, without the Tasker binary) runs with this build.
  @Test func theDemoOnTheREADMEsFirstScreenRuns() throws {
    let script = URL(fileURLWithPath: TerminalDriver.script).deletingLastPathComponent()
      .appendingPathComponent("demo.sh").path
    let result = try runTool(["bash", script, TaskKeyBinary.url.path, ""])
    #expect(result.output.contains("Demo finished"), "\(result.output)")
  }

  @Test func noteKeysAreListedWithoutChangeAndPromoted() throws {
    let vault = try CLIVault()
    let first = try json(vault.run(["keys", "--json"]))
    let original = try #require(first["primary"] as? String)
    #expect((first["keys"] as? [[String: Any]])?.count == 1)
    #expect(try json(vault.run(["keys", "--json"]))["primary"] as? String == original, "keys changed something")
    let rotated = try #require(try json(vault.run(["rotate", "--json"]))["primary"] as? String)
    let listing = try vault.run(["keys"])
    #expect(listing.stdoutText.contains("\(rotated)\tprimary") && listing.stdoutText.contains("\(original)\tactive"))
    #expect(try vault.run(["retire", rotated, "--force"]).status == 17, "the primary is refused")
    let promoted = try json(vault.run(["promote", original, "--json"]))
    #expect(promoted["primary"] as? String == original && promoted["previous"] as? String == rotated)
    #expect(try vault.run(["retire", rotated, "--force"]).status == 0)
    let afterRetire = try json(vault.run(["keys", "--json"]))
    #expect(afterRetire["retired"] as? [String] == [rotated])
    #expect((afterRetire["keys"] as? [[String: Any]])?.count == 1)
    #expect(try vault.run(["keys"]).stdoutText.contains("\(rotated)\tretired"))
    #expect(try vault.run(["promote", "0badc0de"]).status == 11)
    #expect(try vault.run(["promote", "xyz"]).status == 65)
  }

  @Test func aSecondDeviceJoinsInOneStepAndSealsUnderTheSamePrimary() throws {
    let laptop = try CLIVault()
    let sealedOnLaptop = try laptop.run(["seal", "-c", "note/1/body"], text: "from the laptop")
    let bundle = laptop.home.path("keys.tksync")
    #expect(try laptop.run(["sync", "export", "-o", bundle, "--passphrase-file", laptop.passphraseFile]).status == 0)

    let desktop = try CLIVault(passphrase: "not the laptop passphrase", initialise: false, unlock: false)
    // A wrong passphrase is proven wrong on the bundle: nothing is made.
    let wrong = try desktop.run(["init", "--from-bundle", bundle, "--passphrase-file", desktop.passphraseFile])
    #expect(wrong.status == 13, "\(wrong.stderr)")
    #expect(wrong.stderr.contains("the passphrase of the vault that exported it"), "the hint names whose passphrase")
    #expect(!FileManager.default.fileExists(atPath: desktop.directory + "/vault.tkv"))
    let joined = try desktop.run(
      [
        "init", "--from-bundle", bundle, "--kdf", "fast-test-only", "--passphrase-file", laptop.passphraseFile,
        "--json",
      ])
    #expect(joined.status == 0, "\(joined.stderr)")
    let report = try json(joined)
    #expect(report["state"] as? String == "unlocked" && report["joined_from"] as? String == bundle)
    let laptopKeys = try json(laptop.run(["keys", "--json"]))
    #expect(report["primary_key_id"] as? String == laptopKeys["primary"] as? String)
    #expect(try json(desktop.run(["keys", "--json"]))["primary"] as? String == laptopKeys["primary"] as? String)
    // Both ways, with no bundle travelling back.
    let opened = try desktop.run(["open", "-c", "note/1/body"], input: sealedOnLaptop.stdout)
    #expect(opened.stdoutText == "from the laptop\n")
    let sealedOnDesktop = try desktop.run(["seal", "-c", "note/2/body"], text: "from the desktop")
    #expect(
      try laptop.run(["open", "-c", "note/2/body"], input: sealedOnDesktop.stdout).stdoutText == "from the desktop\n")
    // The same passphrase unlocks the joined vault.
    #expect(try desktop.run(["lock"]).status == 0)
    #expect(try desktop.run(["unlock", "--passphrase-file", laptop.passphraseFile]).status == 0)

    // The laptop rotates; the desktop's import adopts the new primary.
    let newPrimary = try #require(try json(laptop.run(["rotate", "--json"]))["primary"] as? String)
    let second = laptop.home.path("keys2.tksync")
    #expect(try laptop.run(["sync", "export", "-o", second, "--passphrase-file", laptop.passphraseFile]).status == 0)
    let wrongImport = try desktop.run(["sync", "import", second, "--passphrase-file", desktop.passphraseFile])
    #expect(wrongImport.status == 13 && wrongImport.stderr.contains("wrong passphrase for the sync bundle"))
    #expect(wrongImport.stderr.contains("the passphrase of the vault that exported it"), "\(wrongImport.stderr)")
    let imported = try json(
      desktop.run(["sync", "import", second, "--json", "--passphrase-file", laptop.passphraseFile]))
    #expect(imported["primary"] as? String == newPrimary)
  }

  @Test func theJoinPromptNamesWhosePassphraseItIs() throws {
    let laptop = try CLIVault()
    let bundle = laptop.home.path("keys.tksync")
    #expect(try laptop.run(["sync", "export", "-o", bundle, "--passphrase-file", laptop.passphraseFile]).status == 0)
    let home = try TemporaryDirectory()
    let outcome = try TerminalDriver.drive(
      ["init", "--from-bundle", bundle, "--kdf", "fast-test-only"], home: home,
      steps: [("exported the bundle: ", "correct horse battery\n")])
    #expect(outcome.terminal.contains("Passphrase of the vault that exported the bundle: "))
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(!outcome.terminal.contains("Repeat"), "a known passphrase is not confirmed")
    _ = try TaskKeyBinary.run(["lock"], environment: ["TASKKEY_HOME": home.path("keys")])
  }

  @Test func cheapRefusalsComeBeforeAnyPromptOrKDF() throws {
    let vault = try CLIVault()
    let out = vault.home.path("exists")
    try writePrivate(out, "x")
    // Without a terminal, a prompt would fail with 40: 73 shows the check came first.
    let env = ["TASKKEY_HOME": vault.directory]
    #expect(try TaskKeyBinary.run(["sync", "export", "-o", out], environment: env, detached: true).status == 73)
    #expect(
      try TaskKeyBinary.run(["sync", "export", "-o", vault.home.path("new")], environment: env, detached: true)
        .status == 40)
    #expect(try TaskKeyBinary.run(["init"], environment: env, detached: true).status == 73, "vault exists")
    let fresh = try TemporaryDirectory()
    let empty = try TaskKeyBinary.run(
      ["init", "--passphrase-fd", "0"], stdin: Array("\n".utf8), environment: ["TASKKEY_HOME": fresh.path("k")])
    #expect(empty.status == 41 && empty.stderr.contains("the passphrase is empty"))
    let weak = try TaskKeyBinary.run(
      ["init", "--passphrase-fd", "0"], stdin: Array("abc\n".utf8), environment: ["TASKKEY_HOME": fresh.path("k")])
    #expect(weak.status == 41)
    #expect(weak.stderr.contains("3 character(s) long"))
    #expect(!FileManager.default.fileExists(atPath: fresh.path("k/vault.tkv")))
    let accepted = try TaskKeyBinary.run(
      ["init", "--kdf", "fast-test-only", "--passphrase-fd", "0", "--accept-weak-passphrase"],
      stdin: Array("password1234\n".utf8), environment: ["TASKKEY_HOME": fresh.path("k")])
    #expect(accepted.status == 0)
    #expect(accepted.stderr.contains("weak passphrase (it is one of the most common passwords)"))
    // The passphrase just proven at init unlocked the vault.
    #expect(try TaskKeyBinary.run(["status", "--check"], environment: ["TASKKEY_HOME": fresh.path("k")]).status == 0)
    _ = try TaskKeyBinary.run(["lock"], environment: ["TASKKEY_HOME": fresh.path("k")])
  }

  /// `sync export` with the terminal as standard output and no --out is
  /// refused before the passphrase prompt (so before the KDF).
  @Test func exportToATerminalIsRefusedBeforeThePrompt() throws {
    let vault = try CLIVault()
    let environment = ["TASKKEY_HOME": vault.directory, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
    let outcome = try TerminalDriver.drive(
      command: ["/bin/sh", "-c", "\"$0\" sync export > /dev/tty; s=$?; sleep 1; exit $s", TaskKeyBinary.url.path],
      environment: environment, home: vault.home, steps: [], interactive: false)
    #expect(outcome.status == 64, "\(outcome.terminal) \(outcome.stderr)")
    #expect(outcome.stderr.contains("refusing to write a binary sync bundle to a terminal"), "\(outcome.stderr)")
    #expect(!outcome.terminal.contains("passphrase"), "\(outcome.terminal)")
  }

  @Test func theNextCommandPutsBackMissingBackupMarkers() throws {
    let vault = try CLIVault()
    #expect(try vault.run(["item", "set", "k", "--device-only"], text: "v").status == 0)
    let marker = vault.directory + "/device-only/.nobackup"
    try FileManager.default.removeItem(atPath: marker)
    let status = try vault.run(["status"])
    #expect(status.status == 0)
    #expect(status.stderr.contains("put back the backup exclusion marker(s) of device-only/: .nobackup"))
    #expect(FileManager.default.fileExists(atPath: marker))
    #expect(try vault.run(["doctor"]).status == 0)
    try FileManager.default.removeItem(atPath: marker)
    #expect(try vault.run(["-q", "keys"]).stderr.isEmpty, "-q keeps the note quiet")
    #expect(FileManager.default.fileExists(atPath: marker))
  }

  @Test func durationsAreCompoundAndAnsweredInTheUnitTyped() throws {
    let vault = try CLIVault()
    #expect(try vault.run(["unlock", "--for", "1h30m", "--passphrase-file", vault.passphraseFile]).status == 0)
    let until = try #require(try json(vault.run(["status", "--json"]))["unlocked_until"] as? String)
    let date = try #require(ISO8601DateFormatter().date(from: until))
    #expect(abs(date.timeIntervalSinceNow - 5400) < 120, "\(until)")
    #expect(try vault.run(["mint", "--name", "bot"]).status == 0)
    let tooLong = try vault.run(["rotate", "--assistant", "bot", "--overlap", "40d"])
    #expect(tooLong.status == 64)
    #expect(tooLong.stderr.contains("--overlap 40d is longer than the limit of 30d"))
    #expect(try vault.run(["rotate", "--assistant", "bot", "--overlap", "1000h"]).stderr.contains("limit of 720h"))
    let rotated = try vault.run(["rotate", "--assistant", "bot", "--overlap", "10m"])
    #expect(rotated.stderr.contains("stops verifying in 10m"), "\(rotated.stderr)")
    for bad in ["1h1h", "30m1h", "0h", "h", "1.5h", "1x"] {
      #expect(
        try vault.run(["unlock", "--for", bad, "--passphrase-file", vault.passphraseFile]).status == 64, "\(bad)")
    }
    // The overlapping key's EXPIRES is its overlap end, as verify says; to the minute.
    let list = try vault.run(["list"]).stdoutText
    let overlapping = try #require(list.split(separator: "\n").first { $0.contains("overlapping") })
    #expect(!overlapping.contains("never\tnever"), "\(overlapping)")
    #expect(overlapping.range(of: #"\d{4}-\d\d-\d\dT\d\d:\d\dZ"#, options: .regularExpression) != nil)
  }

  @Test func timesAreLocalOnATerminalAndUTCInJSON() throws {
    let vault = try CLIVault()
    let environment = [
      "TASKKEY_HOME": vault.directory, "TZ": "Asia/Tokyo", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
    ]
    // Standard output is the terminal itself (/dev/tty inside the session).
    let outcome = try TerminalDriver.drive(
      command: ["/bin/sh", "-c", "\"$0\" status > /dev/tty; sleep 1", TaskKeyBinary.url.path], environment: environment,
      home: vault.home, steps: [], interactive: false)
    #expect(outcome.terminal.contains(" +09:00"), "status \(outcome.status): \(outcome.terminal) \(outcome.stderr)")
    let piped = try TaskKeyBinary.run(["status", "--json"], environment: environment)
    let created = try #require(try json(piped)["created"] as? String)
    #expect(created.hasSuffix("Z"), "\(created)")
  }

  @Test func shortFlagsSuggestionsQuietVerboseAndTheUnlockedCheck() throws {
    let vault = try CLIVault()
    let sealed = try vault.run(["seal", "-c", "note/5/body"], text: "short")
    #expect(try vault.run(["open", "--context=note/5/body"], input: sealed.stdout).stdoutText == "short\n")
    #expect(try vault.run(["keygen", "-o", vault.home.path("k.key")]).status == 0)
    let typo = try vault.run(["statsu"])
    #expect(typo.status == 64 && typo.stderr.contains("did you mean 'status'?"))
    #expect(try vault.run(["sync", "exprot"]).stderr.contains("did you mean 'export'?"))
    #expect(try vault.run(["status", "--jsno"]).stderr.contains("did you mean '--json'?"))
    #expect(try vault.run(["-v", "keys"]).stderr.contains("vault: \(vault.directory)"))
    #expect(try vault.run(["rotate", "-q"]).stderr.isEmpty)
    #expect(try vault.run(["status", "--check"]).status == 0)
    #expect(try vault.run(["status", "--check"]).stdout.isEmpty)
    #expect(try vault.run(["lock"]).status == 0)
    let locked = try vault.run(["status", "--check"])
    #expect(locked.status == 14 && locked.stdout.isEmpty && locked.stderr.isEmpty)
    let none = try TaskKeyBinary.run(["status", "--check"], environment: ["TASKKEY_HOME": vault.home.path("none")])
    #expect(none.status == 16 && none.stderr.isEmpty)
  }

  /// Every reporting command's JSON: snake_case keys only, each top-level
  /// key named in that command's `--json` help.
  @Test func oneJSONStyleDocumentedPerCommand() throws {
    let vault = try CLIVault()
    let file = vault.home.path("values")
    try (try vault.run(["seal"], text: "v").stdoutText).write(toFile: file, atomically: true, encoding: .utf8)
    let lines = vault.home.path("lines.jsonl")
    try #"{"v":"plain"}"#.appending("\n").write(toFile: lines, atomically: true, encoding: .utf8)
    #expect(try vault.run(["mint", "--name", "bot"]).status == 0)
    let listed = try vault.run(["list", "--json"]).stdoutText
    let id = try #require(
      listed.range(of: #"tkid_[0-9a-f]{16}"#, options: .regularExpression).map { String(listed[$0]) })
    let runs: [[String]] = [
      ["status", "--json"], ["keys", "--json"], ["list", "--json"], ["item", "list", "--json"],
      ["doctor", "--json"], ["keygen", "-o", vault.home.path("n.key"), "--json"],
      ["sync", "export", "-o", vault.home.path("b"), "--json", "--passphrase-file", vault.passphraseFile],
      ["backup", "create", "-o", vault.home.path("bk"), "--json"], ["mint", "--name", "other", "--json"],
      ["rotate", "--json"], ["revoke", id, "--json"],
      ["seal", "--field", "v", "-i", lines, "-o", vault.home.path("s1"), "--json"],
      ["rewrap", "--field", "v", "-i", vault.home.path("s1"), "-o", vault.home.path("s2"), "--json"],
      ["open", "--field", "v", "-i", vault.home.path("s2"), "-o", vault.home.path("s3"), "--json"],
      ["unlock", "--json", "--passphrase-file", vault.passphraseFile], ["lock", "--json"],
    ]
    func keys(_ value: Any) -> [String] {
      if let object = value as? [String: Any] { return object.keys + object.values.flatMap(keys) }
      if let array = value as? [Any] { return array.flatMap(keys) }
      return []
    }
    var reports = [String: [String: Any]]()
    for arguments in runs {
      let result = try vault.run(arguments)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      let object = try json(result)
      reports[arguments[0]] = object
      for key in keys(object) {
        #expect(key.range(of: #"^[a-z][a-z0-9_]*$"#, options: .regularExpression) != nil, "\(arguments): \(key)")
      }
      let path = Array(arguments.prefix { !$0.hasPrefix("-") }.prefix(2))
      let help = try vault.run(path + ["--help"]).stdoutText
      let jsonHelp = try #require(help.components(separatedBy: "\n  --json").dropFirst().first, "\(path)")
      for key in object.keys { #expect(jsonHelp.contains(key), "\(path) --help does not list '\(key)'") }
    }
    // The batch counts: one sealed, then already under the primary, then opened back.
    #expect(reports["seal"]?["sealed"] as? Int == 1 && reports["seal"]?["already_sealed"] as? Int == 0)
    #expect(reports["rewrap"]?["current"] as? Int == 1 && reports["rewrap"]?["resealed"] as? Int == 0)
    #expect(reports["open"]?["opened"] as? Int == 1 && reports["open"]?["plain"] as? Int == 0)
    #expect(try String(contentsOfFile: vault.home.path("s3"), encoding: .utf8) == #"{"v":"plain"}"# + "\n")
    #expect(try vault.run(["seal", "--field", "v", "-i", lines, "--json"]).status == 64, "--json needs --out")
    #expect(try vault.run(["open", "--json"], text: "x").status == 64, "--json needs --field")
  }
}
