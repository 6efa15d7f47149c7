import Foundation
import TaskCrypto
import TaskKeyTestSupport
import Testing

@Suite("taskkey vault commands, end to end")
struct VaultCommandTests {
  @Test func itemsRoundTripThroughTheBinaryInBothStores() throws {
    let vault = try CLIVault()
    #expect(try vault.run(["item", "set", "sync/one", "--label", "One"], text: "first\n").status == 0)
    #expect(try vault.run(["item", "set", "provider/openai", "--device-only"], text: "sk-abc\n").status == 0)
    let got = try vault.run(["item", "get", "provider/openai"])
    #expect(got.status == 0)
    #expect(got.stdoutText == "sk-abc\n")
    #expect(got.stderr.isEmpty)
    let list = try vault.run(["item", "list", "--json"])
    #expect(list.status == 0)
    #expect(list.stdoutText.contains(#""class":"after-first-unlock-this-device-only""#))
    #expect(list.stdoutText.contains(#""label":"One""#))
    #expect(!list.stdoutText.contains("sk-abc"), "values never listed")
    #expect(try vault.run(["item", "remove", "sync/one"]).status == 0)
    #expect(try vault.run(["item", "get", "sync/one"]).status == 19)
  }

  @Test func lockedVaultExits14AndWrongPassphrase13() throws {
    let vault = try CLIVault(unlock: false)
    let locked = try vault.run(["item", "list"])
    #expect(locked.status == 14)
    #expect(locked.stderr.contains("hint: run 'taskkey unlock'"))
    let wrong = try vault.run(["unlock", "--passphrase-fd", "0"], text: "not it\n")
    #expect(wrong.status == 13)
    #expect(wrong.stderr.contains("wrong passphrase"))
    #expect(!wrong.stderr.contains("not it"))
    let empty = try vault.run(["unlock", "--passphrase-fd", "0"], text: "\n")
    #expect(empty.status == 41)
    #expect(empty.stderr.contains("the passphrase is empty"))
    #expect(try vault.run(["unlock", "--passphrase-file", vault.passphraseFile]).status == 0)
    #expect(try vault.run(["item", "list"]).status == 0)
    #expect(try vault.run(["lock"]).status == 0)
    #expect(try vault.run(["item", "list"]).status == 14)
  }

  @Test func missingVaultExits16() throws {
    let vault = try CLIVault(initialise: false, unlock: false)
    let result = try vault.run(["status"])
    #expect(result.status == 16)
    #expect(result.stderr.contains("taskkey init"))
    #expect(try vault.run(["seal"], text: "x").status == 16)
  }

  @Test func damagedVaultFileExits15AndUnknownVersion12() throws {
    let vault = try CLIVault(unlock: false)
    let path = vault.directory + "/vault.tkv"
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    bytes[300] ^= 1
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let damaged = try vault.run(["unlock", "--passphrase-file", vault.passphraseFile])
    #expect(damaged.status == 15)
    #expect(damaged.stderr.contains("checksum mismatch"))
    try Data(fixChecksum(bytes)).write(to: URL(fileURLWithPath: path))
    let altered = try vault.run(["unlock", "--passphrase-file", vault.passphraseFile])
    #expect(altered.status == 15)
    #expect(altered.stderr.contains("was altered"))
    bytes[300] ^= 1
    bytes[9] = 7
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    #expect(try vault.run(["status"]).status == 12)
  }

  /// Expiry itself is checked with the injected clock in TaskVaultTests
  /// (`aTimedUnlockExpiresForEveryProcess`); here the binary only has to
  /// accept the limit and report it, without a real wait.
  @Test func aTimedUnlockIsAcceptedAndReported() throws {
    let vault = try CLIVault(unlock: false)
    let unlock = try vault.run(["unlock", "--for", "1h", "--passphrase-file", vault.passphraseFile])
    #expect(unlock.status == 0)
    #expect(unlock.stdoutText.hasPrefix("Unlocked until ") && !unlock.stdoutText.hasPrefix("Unlocked until reboot"))
    #expect(try vault.run(["item", "list"]).status == 0)
    let status = try vault.run(["status"])
    #expect(status.status == 0)
    #expect(status.stdoutText.contains("unlocked until "))
    #expect(!status.stdoutText.contains("reboot or lock"))
  }

  @Test func everyVaultCommandHasHelp() throws {
    let vault = try CLIVault(initialise: false, unlock: false)
    for command in ["init", "unlock", "lock", "status", "passphrase", "item", "sync"] {
      let help = try vault.run([command, "--help"])
      #expect(help.status == 0, "\(command)")
      #expect(help.stdoutText.contains("USAGE: taskkey \(command)"), "\(command)")
      #expect(help.stdoutText.contains("EXAMPLE:"), "\(command)")
    }
  }

  @Test func loosePermissionsExit77WithTheFix() throws {
    let vault = try CLIVault(unlock: false)
    chmod(vault.directory + "/vault.tkv", 0o640)
    let result = try vault.run(["status"])
    #expect(result.status == 77)
    #expect(result.stderr.contains("hint: run: chmod 600"))
    chmod(vault.directory + "/vault.tkv", 0o600)
    chmod(vault.passphraseFile, 0o644)
    let loosePassphrase = try vault.run(["unlock", "--passphrase-file", vault.passphraseFile])
    #expect(loosePassphrase.status == 77)
    chmod(vault.passphraseFile, 0o600)
    let link = vault.home.path("pass-link")
    symlink(vault.passphraseFile, link)
    #expect(try vault.run(["unlock", "--passphrase-file", link]).status == 77)
  }

  @Test func syncExportWritesANewPrivateFileAndNeverReplacesOne() throws {
    let vault = try CLIVault()
    let out = vault.home.path("bundle.tksync")
    let first = try vault.run(["sync", "export", "--out", out, "--passphrase-file", vault.passphraseFile])
    #expect(first.status == 0, "\(first.stderr)")
    let attributes = try FileManager.default.attributesOfItem(atPath: out)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    let again = try vault.run(["sync", "export", "--out", out, "--passphrase-file", vault.passphraseFile])
    #expect(again.status == 73)
    #expect(again.stderr.contains("already exists"))
  }

  @Test func statusShowsTheFastPresetAndLockState() throws {
    let vault = try CLIVault(unlock: false)
    let locked = try vault.run(["status", "--json"])
    #expect(locked.status == 0)
    #expect(locked.stdoutText.contains(#""preset":"fast-test-only""#))
    #expect(locked.stdoutText.contains(#""state":"locked""#))
    #expect(try vault.run(["unlock", "--for", "1h", "--passphrase-file", vault.passphraseFile]).status == 0)
    let unlocked = try vault.run(["status"])
    #expect(unlocked.stdoutText.contains("state:       unlocked until 20"))
    #expect(unlocked.stdoutText.contains("NOT FOR REAL SECRETS"))
  }

  @Test func passphraseChangeThroughOneDescriptor() throws {
    let vault = try CLIVault()
    let changed = try vault.run(
      ["passphrase", "--passphrase-fd", "0", "--new-passphrase-fd", "0"],
      text: "correct horse battery\nnew passphrase here\n")
    #expect(changed.status == 0, "\(changed.stderr)")
    #expect(try vault.run(["lock"]).status == 0)
    #expect(try vault.run(["unlock", "--passphrase-file", vault.passphraseFile]).status == 13)
    #expect(try vault.run(["unlock", "--passphrase-fd", "0"], text: "new passphrase here\n").status == 0)
  }

  @Test func sealAndOpenUseTheVaultKeyringWithoutAKeyFile() throws {
    let vault = try CLIVault()
    let sealed = try vault.run(["seal", "--context", "note/1/body"], text: "buy milk\n")
    #expect(sealed.status == 0)
    let opened = try vault.run(["open", "--context", "note/1/body"], input: sealed.stdout)
    #expect(opened.stdoutText == "buy milk\n")
    #expect(try vault.run(["lock"]).status == 0)
    #expect(try vault.run(["open", "--context", "note/1/body"], input: sealed.stdout).status == 14)
  }

  @Test func twoProcessesWritingAtOnceLoseNothing() throws {
    let vault = try CLIVault()
    let count = 16
    let statuses = StatusBox(count: count)
    DispatchQueue.concurrentPerform(iterations: count) { index in
      let result = try? vault.run(["item", "set", "item-\(index)"], text: "value-\(index)")
      statuses.set(index, result?.status ?? -1)
    }
    #expect(statuses.all.allSatisfy { $0 == 0 })
    let list = try vault.run(["item", "list"])
    let names = Set(list.stdoutText.split(separator: "\n").map { String($0.split(separator: "\t")[0]) })
    #expect(names == Set((0..<count).map { "item-\($0)" }))
    let status = try vault.run(["status", "--json"])
    #expect(status.stdoutText.contains(#""generation":\#(count + 1)"#))
  }

  @Test func syncBundleCarriesNoteKeysButNoDeviceOnlyItem() throws {
    let laptop = try CLIVault()
    let desktop = try CLIVault(passphrase: "desktop pass")
    let secretValue = "sk-DEVICE-ONLY-\(UUID().uuidString)"
    #expect(try laptop.run(["item", "set", "provider/openai", "--device-only"], text: secretValue).status == 0)
    let sealed = try laptop.run(["seal", "--context", "note/9/body"], text: "from the laptop")
    let exported = try laptop.run(["sync", "export", "--passphrase-file", laptop.passphraseFile])
    #expect(exported.status == 0)
    #expect(!contains(exported.stdout, Array(secretValue.utf8)))
    #expect(!contains(exported.stdout, Array("provider/openai".utf8)))
    let bundlePath = desktop.home.path("bundle.tksync")
    try Data(exported.stdout).write(to: URL(fileURLWithPath: bundlePath))
    let imported = try desktop.run(["sync", "import", bundlePath, "--json", "--passphrase-file", laptop.passphraseFile])
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(imported.stdoutText.contains(#""added_keys":[""#))
    let opened = try desktop.run(["open", "--context", "note/9/body"], input: sealed.stdout)
    #expect(opened.stdoutText == "from the laptop\n")
    #expect(try desktop.run(["item", "get", "provider/openai"]).status == 19)
    let wrong = try desktop.run(["sync", "import", bundlePath, "--passphrase-file", desktop.passphraseFile])
    #expect(wrong.status == 13)
  }

  @Test func usageErrorsExit64() throws {
    let vault = try CLIVault(initialise: false, unlock: false)
    for arguments in [
      ["unlock", "--for", "soon"], ["item"], ["item", "set"], ["item", "get", "a", "b"], ["sync", "import"],
      ["init", "--kdf", "weak"], ["unlock", "--passphrase-file", "a", "--passphrase-fd", "0"],
      ["item", "list", "--device-only"],
    ] {
      let result = try vault.run(arguments)
      #expect(result.status == 64, "\(arguments)")
      #expect(result.stderr.hasPrefix("taskkey: error: "), "\(arguments)")
    }
  }
}

private final class StatusBox: @unchecked Sendable {
  private let lock = NSLock()
  private var values: [Int32]

  init(count: Int) { values = Array(repeating: -2, count: count) }

  func set(_ index: Int, _ value: Int32) {
    lock.lock()
    values[index] = value
    lock.unlock()
  }

  var all: [Int32] {
    lock.lock()
    defer { lock.unlock() }
    return values
  }
}
