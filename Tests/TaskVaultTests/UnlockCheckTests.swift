import Foundation
import Glibc
import TaskCrypto
import TaskKeyTestSupport
import Testing

@testable import TaskVault

@Suite("The cheap unlock check, and note keys read without the device-only store")
struct UnlockCheckTests {
  let machine: TestMachine

  init() throws {
    machine = try TestMachine()
  }

  func unlocked(for duration: Duration? = nil) throws -> Vault {
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"), for: duration)
    return vault
  }

  @Test func aLockedVaultHasNoStamp() throws {
    let vault = try machine.create()
    #expect(try vault.unlockStamp() == nil)
    try vault.unlock(passphrase: secret("correct horse"))
    #expect(try vault.unlockStamp() != nil)
    try vault.lock()
    #expect(try vault.unlockStamp() == nil)
  }

  @Test func aStampHoldsUntilLockUnlockOrAPassphraseChange() throws {
    let vault = try unlocked()
    let stamp = try #require(try vault.unlockStamp())
    #expect(vault.isStillUnlocked(since: stamp))
    #expect(try machine.open().isStillUnlocked(since: stamp), "another process of the same vault sees the same files")
    try vault.setItem(secret("v"), named: "calendar/token", class: .afterFirstUnlock)
    #expect(!vault.isStillUnlocked(since: stamp), "vault.tkv was replaced")

    let second = try #require(try vault.unlockStamp())
    #expect(vault.isStillUnlocked(since: second))
    try vault.lock()
    #expect(!vault.isStillUnlocked(since: second), "lock removes the session")

    try vault.unlock(passphrase: secret("correct horse"))
    let third = try #require(try vault.unlockStamp())
    try vault.unlock(passphrase: secret("correct horse"))
    #expect(!vault.isStillUnlocked(since: third), "a new unlock replaces the session")

    let fourth = try #require(try vault.unlockStamp())
    try vault.changePassphrase(from: secret("correct horse"), to: secret("another horse"))
    #expect(!vault.isStillUnlocked(since: fourth))
  }

  @Test func aRebootEndsTheStamp() throws {
    let vault = try unlocked()
    let stamp = try #require(try vault.unlockStamp())
    try machine.reboot()
    #expect(!vault.isStillUnlocked(since: stamp), "the runtime directory was emptied")
    #expect(try vault.unlockStamp() == nil)
  }

  @Test func aTimedUnlockEndsTheStampWithoutAnyFileChanging() throws {
    let vault = try unlocked(for: .seconds(60))
    let stamp = try #require(try vault.unlockStamp())
    #expect(stamp.notAfter == machine.now + 60)
    machine.now += 59
    #expect(vault.isStillUnlocked(since: stamp))
    machine.now += 1
    #expect(!vault.isStillUnlocked(since: stamp))
    #expect(try vault.unlockStamp() == nil)
  }

  /// Replaces `device.tkv` by bytes no reader accepts, keeping it private.
  func damageDeviceFile(_ vault: Vault) throws {
    let path = vault.layout.deviceFile
    #expect(FileManager.default.fileExists(atPath: path))
    try Data(repeating: 0x41, count: 64).write(to: URL(fileURLWithPath: path))
    chmod(path, 0o600)
  }

  @Test func noteKeysOpenWithADamagedDeviceOnlyFile() throws {
    let vault = try unlocked()
    try vault.setItem(secret("sk-device"), named: "openai/key", class: .afterFirstUnlockThisDeviceOnly)
    let keyring = try vault.noteKeyring()
    let retired = try vault.retiredNoteKeyIDs()
    try damageDeviceFile(vault)
    // The test can fail: a reader of the device-only store refuses the file.
    #expect(throws: TaskVaultError.self) { try vault.item(named: "openai/key") }
    #expect(try vault.noteKeyring() == keyring)
    #expect(try vault.noteKeyringWithRevision().keyring == keyring)
    #expect(try vault.retiredNoteKeyIDs() == retired)
  }

  @Test func noteKeysOpenWithAnUnreadableOrAbsentDeviceOnlyFile() throws {
    let vault = try unlocked()
    try vault.setItem(secret("sk-device"), named: "openai/key", class: .afterFirstUnlockThisDeviceOnly)
    let keyring = try vault.noteKeyring()
    let path = vault.layout.deviceFile
    // Readable by others: every reader of the device-only file refuses it.
    chmod(path, 0o644)
    #expect(throws: TaskVaultError.self) { try vault.item(named: "openai/key") }
    #expect(try vault.noteKeyring() == keyring)
    try FileManager.default.removeItem(atPath: path)
    #expect(try vault.noteKeyring() == keyring)
  }
}
