import Foundation
import TaskKeyTestSupport
import Testing

/// Two directories stand in for two devices: the laptop makes a backup,
/// the new machine restores it.
@Suite("Backup and restore between two devices")
struct RestoreRoundTripTests {
  @Test func aRestoredVaultOpensOldNotesButHasNoDeviceOnlyItemsAndNoAssistantKeys() throws {
    let laptop = try FullVault()
    let sealed = try laptop.cli.run(["seal", "--context", "note/1/body"], text: "buy milk")
    try FullVault.check(sealed)
    let backup = laptop.home.path("laptop.tkbackup")
    try FullVault.check(laptop.cli.run(["backup", "create", "--out", backup]))
    #expect(try mode(backup) == 0o600)
    try FullVault.check(laptop.cli.run(["lock"]))

    let newMachine = try CLIVault(initialise: false, unlock: false)
    let restored = try newMachine.run(["backup", "restore", backup, "--passphrase-file", laptop.cli.passphraseFile])
    #expect(restored.status == 0, "\(restored.stderr)")
    #expect(restored.stdoutText.contains("every assistant needs a new key"))
    #expect(restored.stdoutText.contains("Device-only items: absent"))
    try FullVault.check(newMachine.run(["unlock", "--passphrase-file", laptop.cli.passphraseFile]))

    // The note keyring came back: a note sealed before the backup opens.
    let opened = try newMachine.run(["open", "--context", "note/1/body"], input: sealed.stdout)
    #expect(opened.status == 0, "\(opened.stderr)")
    #expect(opened.stdoutText.trimmingCharacters(in: .newlines) == "buy milk")
    // Synchronisable items came back; device-only items did not.
    #expect(
      try newMachine.run(["item", "get", "calendar/token"]).stdoutText.trimmingCharacters(in: .newlines)
        == laptop.syncSecret)
    #expect(try newMachine.run(["item", "get", "provider/openai"]).status == 19)
    // Status says the device-only store is absent.
    let status = try newMachine.run(["status", "--json"])
    #expect(status.stdoutText.contains("\"device_only_store\":\"absent\""), "\(status.stdoutText)")
    // Fail closed: the assistant key minted on the laptop is unknown here ...
    let verify = try newMachine.run(["verify"], text: laptop.assistantKey)
    #expect(verify.status == 22, "\(verify.stderr)")
    // ... and a new key works.
    let minted = try newMachine.run(["mint", "--name", "agent"])
    #expect(minted.status == 0)
    #expect(try newMachine.run(["verify"], text: minted.stdoutText.trimmingCharacters(in: .newlines)).status == 0)
    // Nothing device-only or assistant-related is in the backup bytes.
    let bytes = try fileBytes(backup)
    for (what, needle) in try laptop.forbiddenNeedles() { #expect(!contains(bytes, needle), "\(what)") }
  }

  @Test func aRegistryRestoredWithoutItsIntegrityKeyIsRefusedAsDamaged() throws {
    let laptop = try FullVault()
    let registry = try fileBytes(laptop.directory + "/device-only/assistant-keys.registry")
    let backup = laptop.home.path("b.tkbackup")
    try FullVault.check(laptop.cli.run(["backup", "create", "--out", backup]))
    try FullVault.check(laptop.cli.run(["lock"]))
    let other = try CLIVault(initialise: false, unlock: false)
    try FullVault.check(other.run(["backup", "restore", backup, "--passphrase-file", laptop.cli.passphraseFile]))
    // Someone copies the registry file over by hand, without the device-only store.
    let path = other.directory + "/device-only/assistant-keys.registry"
    #expect(
      FileManager.default.createFile(atPath: path, contents: Data(registry), attributes: [.posixPermissions: 0o600]))
    try FullVault.check(other.run(["unlock", "--passphrase-file", laptop.cli.passphraseFile]))
    let verify = try other.run(["verify"], text: laptop.assistantKey)
    #expect(verify.status == 15, "\(verify.stderr)")
  }

  @Test func restoringOverAVaultIsRefusedUnlessForcedAndThenTheOldOneIsKept() throws {
    let laptop = try FullVault()
    let backup = laptop.home.path("b.tkbackup")
    try FullVault.check(laptop.cli.run(["backup", "create", "--out", backup]))
    let before = try fileBytes(laptop.directory + "/device-only/device.tkv")
    let refused = try laptop.cli.run(["backup", "restore", backup, "--passphrase-file", laptop.cli.passphraseFile])
    #expect(refused.status == 73)
    #expect(refused.stderr.contains("--force"))
    #expect(try fileBytes(laptop.directory + "/device-only/device.tkv") == before, "nothing changed")
    let forced = try laptop.cli.run([
      "backup", "restore", backup, "--force", "--json", "--passphrase-file", laptop.cli.passphraseFile,
    ])
    #expect(forced.status == 0, "\(forced.stderr)")
    let report = try JSONSerialization.jsonObject(with: Data(forced.stdout)) as? [String: Any]
    let aside = try #require(report?["moved_aside_to"] as? String)
    #expect(aside.hasPrefix(laptop.directory + ".before-restore-"))
    #expect(try fileBytes(aside + "/device-only/device.tkv") == before, "the old vault is kept whole")
    #expect(!FileManager.default.fileExists(atPath: laptop.directory + "/device-only/device.tkv"))
  }

  @Test func backupCreateNeedsAnUnlockedVaultAndNeverOverwrites() throws {
    let vault = try CLIVault()
    let out = vault.home.path("b.tkbackup")
    try FullVault.check(vault.run(["backup", "create", "--out", out]))
    #expect(try vault.run(["backup", "create", "--out", out]).status == 73)
    try FullVault.check(vault.run(["lock"]))
    #expect(try vault.run(["backup", "create", "--out", vault.home.path("c.tkbackup")]).status == 14)
    #expect(try vault.run(["backup", "create"]).status == 64)
    #expect(try vault.run(["backup", "restore"]).status == 64)
  }

  @Test func aWrongPassphraseOrAnAlteredBackupIsRefusedWithItsOwnExitCode() throws {
    let vault = try CLIVault()
    let out = vault.home.path("b.tkbackup")
    try FullVault.check(vault.run(["backup", "create", "--out", out]))
    let target = try CLIVault(passphrase: "not the vault passphrase", initialise: false, unlock: false)
    #expect(try target.run(["backup", "restore", out, "--passphrase-file", target.passphraseFile]).status == 13)
    var bytes = try fileBytes(out)
    bytes[bytes.count - 1] ^= 1
    let altered = vault.home.path("altered.tkbackup")
    #expect(FileManager.default.createFile(atPath: altered, contents: Data(bytes)))
    #expect(try target.run(["backup", "restore", altered, "--passphrase-file", vault.passphraseFile]).status == 15)
    #expect(!FileManager.default.fileExists(atPath: target.directory), "nothing restored")
  }
}

func mode(_ path: String) throws -> Int {
  (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? 0) & 0o7777
}
