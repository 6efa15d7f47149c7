import Foundation
import TaskCrypto
import TaskKeyTestSupport
import Testing

@testable import TaskVault

@Suite("Sync bundles: only the synchronisable store travels, imports merge by key id")
struct SyncBundleTests {
  let machine: TestMachine

  init() throws {
    machine = try TestMachine()
  }

  /// Two unlocked vaults in two directories, standing in for two devices.
  func twoDevices() throws -> (Vault, Vault) {
    let laptop = try machine.create("shared pass", at: machine.home.path("laptop"))
    try laptop.unlock(passphrase: secret("shared pass"))
    let phone = try machine.create("phone pass", at: machine.home.path("phone"))
    try phone.unlock(passphrase: secret("phone pass"))
    return (laptop, phone)
  }

  @Test func deviceOnlyPlaintextAndKeyBytesAreAbsentFromTheExportedBundle() throws {
    let (laptop, _) = try twoDevices()
    let deviceValue = "sk-proj-DEVICE-ONLY-\(UUID().uuidString)"
    try laptop.setItem(secret(deviceValue), named: "provider/openai", class: .afterFirstUnlockThisDeviceOnly)
    try laptop.setItem(secret("sync-value"), named: "sync/item", class: .afterFirstUnlock)
    let bundle = try laptop.exportSyncBundle(passphrase: secret("shared pass"))

    // Not in the bytes that leave the device ...
    #expect(!contains(bundle, Array(deviceValue.utf8)))
    #expect(!contains(bundle, Array("provider/openai".utf8)))
    let masterKeys = try laptop.sessionKeys(try laptop.readFile()).keys
    for key in masterKeys.all {
      #expect(!contains(bundle, key.withUnsafeBytes { Array($0) }))
    }
    // ... and not in the bundle's plaintext either.
    let parsed = try SyncBundle.parse(bundle, path: "bundle")
    let derived = try SyncBundle.keys(passphrase: secret("shared pass"), salt: parsed.salt, kdf: parsed.kdf)
    let plaintext = bytes(
      of: try AES.GCM.openSecret(
        parsed.sealed, using: derived.key, authenticating: parsed.header(length: parsed.sealed.combined.count)))
    #expect(!contains(plaintext, Array(deviceValue.utf8)))
    #expect(!contains(plaintext, Array("provider/openai".utf8)))
    #expect(contains(plaintext, Array("sync-value".utf8)))
    let noteKey = try laptop.noteKeyring().primary.key.withUnsafeBytes { Array($0) }
    #expect(contains(plaintext, noteKey), "the note keyring does travel")
  }

  @Test func theNoteKeyringSurvivesARoundTripBetweenTwoDevices() throws {
    let (laptop, phone) = try twoDevices()
    let sealed = try SealedValue.seal("from the laptop", using: try laptop.noteKeyring(), context: "note/7/body")
    let report = try phone.importSyncBundle(
      try laptop.exportSyncBundle(passphrase: secret("shared pass")), passphrase: secret("shared pass"),
      primary: .keep)
    let laptopID = try laptop.noteKeyring().primaryID
    let phoneID = try phone.noteKeyring().primaryID
    #expect(report.addedKeyIDs == [laptopID])
    #expect(report.primaryID == phoneID, "the primary is kept unless asked")
    #expect(report.previousPrimaryID == phoneID)
    #expect(try SealedValue.open(sealed, using: try phone.noteKeyring(), context: "note/7/body") == "from the laptop")
    #expect(try phone.noteKeyring().ids == [phoneID, laptopID])
  }

  @Test func importNeverDropsAKeyAndChangesThePrimaryOnlyWhenTold() throws {
    let (laptop, phone) = try twoDevices()
    try laptop.updateNoteKeyring { try $0.rotate() }
    let laptopKeys = try laptop.noteKeyring()
    let phoneBefore = try phone.noteKeyring()
    let bundle = try laptop.exportSyncBundle(passphrase: secret("shared pass"))
    _ = try phone.importSyncBundle(bundle, passphrase: secret("shared pass"), primary: .keep)
    let again = try phone.importSyncBundle(bundle, passphrase: secret("shared pass"), primary: .keep)
    #expect(again.addedKeyIDs.isEmpty)
    #expect(again.unchangedKeyIDs == laptopKeys.ids)
    let adopted = try phone.importSyncBundle(bundle, passphrase: secret("shared pass"), primary: .adopt)
    #expect(adopted.primaryID == laptopKeys.primaryID)
    let after = try phone.noteKeyring()
    #expect(Set(after.ids) == Set(phoneBefore.ids + laptopKeys.ids))
    #expect(after.primaryID == laptopKeys.primaryID)
  }

  @Test func itemsMergeByNameAndTheLaterModificationWins() throws {
    let (laptop, phone) = try twoDevices()
    try phone.setItem(secret("old"), named: "shared", class: .afterFirstUnlock)
    try phone.setItem(secret("phone-only"), named: "clash", class: .afterFirstUnlockThisDeviceOnly)
    machine.now += 10
    try laptop.setItem(secret("new"), named: "shared", class: .afterFirstUnlock)
    try laptop.setItem(secret("added"), named: "fresh", class: .afterFirstUnlock)
    try laptop.setItem(secret("sync"), named: "clash", class: .afterFirstUnlock)
    let report = try phone.importSyncBundle(
      try laptop.exportSyncBundle(passphrase: secret("shared pass")), passphrase: secret("shared pass"))
    #expect(report.addedItems == ["fresh"])
    #expect(report.updatedItems == ["shared"])
    #expect(report.skippedItems == ["clash"])
    #expect(bytes(of: try phone.item(named: "shared").value) == Array("new".utf8))
    #expect(bytes(of: try phone.item(named: "clash").value) == Array("phone-only".utf8))
  }

  @Test func aConflictingKeyIDIsRefusedAndNothingIsWritten() throws {
    let (laptop, phone) = try twoDevices()
    let laptopID = try laptop.noteKeyring().primaryID
    try phone.updateNoteKeyring { try $0.add(NoteKey(id: laptopID, key: try SymmetricKey.generate())) }
    let before = try machine.vaultBytes(phone.directory)
    #expect(throws: TaskVaultError.keyConflict(laptopID)) {
      try phone.importSyncBundle(
        try laptop.exportSyncBundle(passphrase: secret("shared pass")), passphrase: secret("shared pass"))
    }
    #expect(try machine.vaultBytes(phone.directory) == before)
  }

  @Test func bundleWrongPassphraseTamperingAndDamageAreDistinct() throws {
    let (laptop, phone) = try twoDevices()
    #expect(throws: TaskVaultError.wrongPassphrase) { try laptop.exportSyncBundle(passphrase: secret("nope")) }
    let bundle = try laptop.exportSyncBundle(passphrase: secret("shared pass"))
    #expect(throws: TaskVaultError.wrongPassphrase) { try phone.importSyncBundle(bundle, passphrase: secret("nope")) }
    var flipped = bundle
    flipped[200] ^= 1
    #expect(throws: TaskVaultError.damaged(path: "sync bundle", reason: "checksum mismatch (corrupted or altered)")) {
      try phone.importSyncBundle(flipped, passphrase: secret("shared pass"))
    }
    #expect(throws: TaskVaultError.tampered(path: "sync bundle", part: "payload")) {
      try phone.importSyncBundle(fixChecksum(flipped), passphrase: secret("shared pass"))
    }
    var future = bundle
    future[9] = 9
    #expect(throws: TaskVaultError.unsupportedVersion(path: "sync bundle", version: 9)) {
      try phone.importSyncBundle(future, passphrase: secret("shared pass"))
    }
  }

  @Test func everyFlippedBundleByteIsRefused() throws {
    let (laptop, phone) = try twoDevices()
    let bundle = try laptop.exportSyncBundle(passphrase: secret("shared pass"))
    let before = try machine.vaultBytes(phone.directory)
    for index in bundle.indices {
      var flipped = bundle
      flipped[index] ^= 0x04
      #expect(throws: TaskVaultError.self, "byte \(index)") {
        try phone.importSyncBundle(flipped, passphrase: secret("shared pass"))
      }
    }
    #expect(try machine.vaultBytes(phone.directory) == before)
  }
}
