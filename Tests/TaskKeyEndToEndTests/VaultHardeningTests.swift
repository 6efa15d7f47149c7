import Foundation
import TaskKeyTestSupport
import Testing

/// Issue 11, the cases inside the vault: each test failed on the reviewed
/// commit and passes now.
@Suite("Vault hardening")
struct VaultHardeningTests {
  struct Minted {
    let key: String
    let id: String
  }

  func mint(_ vault: CLIVault, _ name: String) throws -> Minted {
    let result = try vault.run(["mint", "--json", "--name", name])
    #expect(result.status == 0, "\(result.stderr)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    return Minted(key: try #require(object["key"] as? String), id: try #require(object["id"] as? String))
  }

  func registryPath(_ vault: CLIVault) -> String { vault.directory + "/device-only/assistant-keys.registry" }

  func putBack(_ bytes: [UInt8], at path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    chmod(path, 0o600)
  }

  /// Case 1: a revoke whose second write (the generation anchor in the
  /// device-only store) failed used to exit 0; putting the registry from
  /// before back then revived the key.
  @Test func aRevokeIsAcknowledgedOnlyOnceItIsPermanent() throws {
    let vault = try CLIVault()
    let minted = try mint(vault, "alpha")
    let before = try fileBytes(registryPath(vault))
    let planted = vault.directory + "/device-only/device.tkv.tmp"
    try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: false)
    let failed = try vault.run(["revoke", minted.id])
    #expect(failed.status != 0, "a revoke that is not permanent exited 0")
    #expect(failed.stderr.hasPrefix("taskkey: error: "))
    #expect(failed.stderr.contains("not permanent") || failed.stderr.contains("not revoked"), "\(failed.stderr)")
    // The next command completes or refuses; it never accepts the key.
    #expect(try vault.run(["verify"], text: minted.key).status != 0)
    try FileManager.default.removeItem(atPath: planted)
    let again = try vault.run(["revoke", minted.id])
    #expect(again.status == 0, "\(again.stderr)")
    try putBack(before, at: registryPath(vault))
    let afterPutBack = try vault.run(["verify"], text: minted.key)
    #expect(afterPutBack.status != 0, "an acknowledged revoke was undone by an older registry")
    #expect(try vault.run(["list"]).status != 0 || afterPutBack.status == 23)
  }

  @Test func aMintOrAssistantRotateIsAcknowledgedOnlyOnceItIsPermanent() throws {
    let vault = try CLIVault()
    _ = try mint(vault, "alpha")
    let planted = vault.directory + "/device-only/device.tkv.tmp"
    try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: false)
    let minted = try vault.run(["mint", "--name", "beta"])
    #expect(minted.status != 0, "a mint that is not permanent exited 0")
    #expect(minted.stdout.isEmpty, "a key was shown for a mint that is not permanent")
    let rotated = try vault.run(["rotate", "--assistant", "alpha"])
    #expect(rotated.status != 0, "an assistant rotate that is not permanent exited 0")
    #expect(rotated.stdout.isEmpty)
  }

  /// Case 2: an edited header (salt) with the checksum recomputed went
  /// unnoticed while unlocked, was carried forward by the next write, and
  /// then the right passphrase no longer unlocked the vault.
  @Test func anEditedHeaderIsRefusedWhileUnlockedAndNeverCarriedForward() throws {
    let vault = try CLIVault()
    #expect(try vault.run(["item", "set", "a/b"], text: "value").status == 0)
    let path = vault.directory + "/vault.tkv"
    let original = try fileBytes(path)
    var edited = original
    edited[40] ^= 0x01  // inside the salt
    try putBack(fixChecksum(edited), at: path)
    #expect(try vault.run(["item", "get", "a/b"]).status == 15)
    #expect(try vault.run(["item", "set", "a/c"], text: "x").status == 15)
    let backup = vault.home.path("b.tkbackup")
    #expect(try vault.run(["backup", "create", "--out", backup]).status == 15)
    #expect(!FileManager.default.fileExists(atPath: backup))
    #expect(try vault.run(["doctor"]).status == 18)
    #expect(try fileBytes(path) == fixChecksum(edited), "a refused command rewrote the vault file")
    try putBack(original, at: path)
    #expect(try vault.run(["lock"]).status == 0)
    #expect(try vault.run(["unlock", "--passphrase-file", vault.passphraseFile]).status == 0)
    #expect(try vault.run(["item", "get", "a/b"]).stdoutText == "value\n")
  }

  /// Case 4: a copy restored into another home shared the session key file
  /// (named by vault id), so unlocking or locking one changed the other.
  @Test func twoHomesWithTheSameVaultHaveIndependentSessions() throws {
    let live = try CLIVault()
    #expect(try live.run(["item", "set", "a/b"], text: "live").status == 0)
    let backup = live.home.path("b.tkbackup")
    #expect(try live.run(["backup", "create", "--out", backup]).status == 0)
    let drill = try TemporaryDirectory()
    let environment = ["TASKKEY_HOME": drill.path("keys")]
    let restored = try TaskKeyBinary.run(
      ["backup", "restore", backup, "--passphrase-file", live.passphraseFile], environment: environment)
    #expect(restored.status == 0, "\(restored.stderr)")
    let unlocked = try TaskKeyBinary.run(
      ["unlock", "--passphrase-file", live.passphraseFile], environment: environment)
    #expect(unlocked.status == 0)
    #expect(try live.run(["item", "get", "a/b"]).stdoutText == "live\n", "unlocking the copy locked the live vault")
    #expect(try TaskKeyBinary.run(["lock"], environment: environment).status == 0)
    let still = try live.run(["item", "get", "a/b"])
    #expect(still.status == 0, "locking the copy locked the live vault: \(still.stderr)")
    #expect(try TaskKeyBinary.run(["item", "get", "a/b"], environment: environment).status == 14)
  }

  /// Case 6: the registry's integrity key was listed, printed and removable
  /// through `item`, after which doctor still said all was well.
  @Test func theInternalNamespaceIsReservedAndDoctorAuthenticatesTheRegistry() throws {
    let vault = try CLIVault()
    let minted = try mint(vault, "alpha")
    let listed = try vault.run(["item", "list"])
    #expect(!listed.stdoutText.contains("assistant-keys/"), "\(listed.stdoutText)")
    let name = "assistant-keys/registry-integrity-key"
    for arguments in [["item", "get", name], ["item", "remove", name], ["item", "set", name]] {
      let result = try vault.run(arguments, text: String(repeating: "x", count: 32))
      #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
      #expect(result.stdout.isEmpty)
    }
    #expect(try vault.run(["verify"], text: minted.key).status == 0)
    #expect(try vault.run(["doctor"]).status == 0)
    var registry = try fileBytes(registryPath(vault))
    registry[registry.count / 2] ^= 0x20
    try putBack(registry, at: registryPath(vault))
    let doctor = try vault.run(["doctor"])
    #expect(doctor.status == 18, "\(doctor.stdoutText)")
    #expect(doctor.stdoutText.contains("registry"))
  }

  /// Case 10: leftovers of a killed mint were never removed nor reported.
  @Test func leftoverTemporaryFilesAreReportedByDoctorAndRemovedByTheNextWrite() throws {
    let vault = try CLIVault()
    _ = try mint(vault, "alpha")
    let leftover = vault.directory + "/device-only/.assistant-keys.0123456789abcdef.tmp"
    try writePrivate(leftover, "partial")
    let doctor = try vault.run(["doctor"])
    #expect(doctor.stdoutText.contains("warning leftover-file: device-only/.assistant-keys.0123456789abcdef.tmp"))
    _ = try mint(vault, "beta")
    #expect(!FileManager.default.fileExists(atPath: leftover))
    #expect(!(try vault.run(["doctor"]).stdoutText.contains("leftover-file")))
  }

  /// Case 10: a restore that stopped part way left a partial home that a
  /// plain retry refused (74). A retry now succeeds.
  @Test func aRestoreThatStoppedPartWayCanSimplyBeRunAgain() throws {
    let live = try CLIVault()
    let backup = live.home.path("b.tkbackup")
    #expect(try live.run(["backup", "create", "--out", backup]).status == 0)
    let drill = try TemporaryDirectory()
    let target = drill.path("keys")
    // What a restore killed after its first steps left behind before.
    try FileManager.default.createDirectory(
      atPath: target + "/device-only", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    chmod(target, 0o700)
    try writePrivate(target + "/vault.lock", "")
    let retry = try TaskKeyBinary.run(
      ["backup", "restore", backup, "--passphrase-file", live.passphraseFile], environment: ["TASKKEY_HOME": target])
    #expect(retry.status == 0, "\(retry.stderr)")
  }

  /// Case 11: a failed unlock of an unlocked vault used to leave it locked.
  @Test func aFailedUnlockChangesNothing() throws {
    let vault = try CLIVault()
    #expect(try vault.run(["item", "set", "a/b"], text: "v").status == 0)
    let planted = vault.directory + "/device-only/unlock.session.tmp"
    try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: false)
    let failed = try vault.run(["unlock", "--passphrase-file", vault.passphraseFile])
    #expect(failed.status != 0)
    try FileManager.default.removeItem(atPath: planted)
    let read = try vault.run(["item", "get", "a/b"])
    #expect(read.status == 0, "the failed unlock locked the vault: \(read.stderr)")
  }

  /// Case 12: with device-only/ at 0755 or 0777, reads of device-only items
  /// succeeded while writes refused.
  @Test(arguments: [0o755, 0o777])
  func readsRefuseLoosePermissionsToo(mode: Int) throws {
    let vault = try CLIVault()
    #expect(try vault.run(["item", "set", "--device-only", "d/e"], text: "v").status == 0)
    chmod(vault.directory + "/device-only", mode_t(mode))
    defer { chmod(vault.directory + "/device-only", 0o700) }
    let read = try vault.run(["item", "get", "d/e"])
    #expect(read.status == 77, "\(read.stderr)")
    #expect(read.stdout.isEmpty)
  }

  /// Case 13: init inside a directory another user can write was allowed;
  /// that user could then move the vault away.
  @Test func initRefusesADirectoryAnotherUserCanWrite() throws {
    let parent = try TemporaryDirectory()
    let shared = parent.path("shared")
    try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
    chmod(shared, 0o777)
    chown(shared, 65534, 65534)
    let passphrase = parent.path("pass")
    try writePrivate(passphrase, "correct horse battery\n")
    let made = try TaskKeyBinary.run(
      ["init", "--kdf", "fast-test-only", "--passphrase-file", passphrase],
      environment: ["TASKKEY_HOME": shared + "/keys"])
    #expect(made.status == 77, "\(made.stderr)")
    #expect(made.stderr.contains("/shared'"), "\(made.stderr)")
    #expect(!FileManager.default.fileExists(atPath: shared + "/keys/vault.tkv"))
  }
}
