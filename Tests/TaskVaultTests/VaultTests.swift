import Foundation
import Glibc
import TaskCrypto
import TaskKeyTestSupport
import TaskSystem
import Testing

@testable import TaskVault

@Suite("Vault: stores, unlock, lock, passphrase")
struct VaultTests {
  let machine: TestMachine

  init() throws {
    machine = try TestMachine()
  }

  func unlocked() throws -> Vault {
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    return vault
  }

  @Test func itemsRoundTripInBothStoresAndSurviveReopening() throws {
    let vault = try unlocked()
    try vault.setItem(secret("note-sync-value"), named: "calendar/token", label: "Calendar", class: .afterFirstUnlock)
    try vault.setItem(secret("sk-device-only"), named: "openai", class: .afterFirstUnlockThisDeviceOnly)
    let reopened = try machine.open()
    #expect(bytes(of: try reopened.item(named: "calendar/token").value) == Array("note-sync-value".utf8))
    let device = try reopened.item(named: "openai")
    #expect(bytes(of: device.value) == Array("sk-device-only".utf8))
    #expect(device.attributes.itemClass == .afterFirstUnlockThisDeviceOnly)
    #expect(device.attributes.label == "openai")
    #expect(device.attributes.created == Date(timeIntervalSince1970: 1_800_000_000))
    let names = try reopened.items().map(\.name)
    #expect(names == ["calendar/token", "openai"])
    #expect(try reopened.items()[0].label == "Calendar")
  }

  @Test func severalItemsFromOneReadAreWhatEachReadGives() throws {
    let vault = try unlocked()
    try vault.setItem(secret("sync"), named: "a", label: "A", class: .afterFirstUnlock)
    try vault.setItem(secret("device"), named: "b", class: .afterFirstUnlockThisDeviceOnly)
    let found = try machine.open().items(named: ["b", "missing", "a"])
    #expect(found.keys.sorted() == ["a", "b"])
    for name in ["a", "b"] {
      let one = try vault.item(named: name)
      #expect(found[name]?.attributes == one.attributes)
      #expect(found[name].map { bytes(of: $0.value) } == bytes(of: one.value))
    }
    try vault.lock()
    #expect(throws: TaskVaultError.self) { try vault.items(named: ["a"]) }
  }

  @Test func replacingAnItemKeepsCreatedAndUpdatesModified() throws {
    let vault = try unlocked()
    try vault.setItem(secret("one"), named: "x", class: .afterFirstUnlock)
    machine.now += 60
    try vault.setItem(secret("two"), named: "x", class: .afterFirstUnlock)
    let item = try vault.item(named: "x")
    #expect(bytes(of: item.value) == Array("two".utf8))
    #expect(item.attributes.created == Date(timeIntervalSince1970: 1_800_000_000))
    #expect(item.attributes.modified == Date(timeIntervalSince1970: 1_800_000_060))
    try vault.setItem(secret("three"), named: "x", label: "Kept", class: .afterFirstUnlock)
    try vault.setItem(secret("four"), named: "x", class: .afterFirstUnlock)
    #expect(try vault.item(named: "x").attributes.label == "Kept", "a nil label keeps the existing one")
  }

  @Test func removedItemIsGoneAndMissingItemIsNamed() throws {
    let vault = try unlocked()
    try vault.setItem(secret("v"), named: "gone", class: .afterFirstUnlockThisDeviceOnly)
    try vault.removeItem(named: "gone")
    #expect(throws: TaskVaultError.itemNotFound(name: "gone")) { try vault.item(named: "gone") }
    #expect(throws: TaskVaultError.itemNotFound(name: "gone")) { try vault.removeItem(named: "gone") }
  }

  @Test func aDeviceOnlyItemNeverSilentlyBecomesSynchronisable() throws {
    let vault = try unlocked()
    try vault.setItem(secret("v"), named: "openai", class: .afterFirstUnlockThisDeviceOnly)
    #expect(throws: TaskVaultError.itemClassConflict(name: "openai", existing: .afterFirstUnlockThisDeviceOnly)) {
      try vault.setItem(secret("v"), named: "openai", class: .afterFirstUnlock)
    }
  }

  @Test func namesLabelsAndSizesOutsideTheLimitsAreRefused() throws {
    let vault = try unlocked()
    #expect(throws: TaskVaultError.self) { try vault.setItem(secret("v"), named: "", class: .afterFirstUnlock) }
    #expect(throws: TaskVaultError.self) { try vault.setItem(secret("v"), named: "a b", class: .afterFirstUnlock) }
    #expect(throws: TaskVaultError.self) {
      try vault.setItem(secret("v"), named: String(repeating: "a", count: 129), class: .afterFirstUnlock)
    }
    #expect(throws: TaskVaultError.self) {
      try vault.setItem(secret("v"), named: "ok", label: "bad\u{7}", class: .afterFirstUnlock)
    }
    let big = try SecureBytes(zeroedCount: VaultLimits.maximumValueByteCount + 1)
    #expect(throws: TaskVaultError.itemTooLarge(byteCount: 65537, limit: 65536)) {
      try vault.setItem(big, named: "big", class: .afterFirstUnlock)
    }
    try vault.setItem(
      try SecureBytes(zeroedCount: VaultLimits.maximumValueByteCount), named: "max", class: .afterFirstUnlock)
  }

  /// Labels refuse every control character (C0, DEL, C1), the line and
  /// paragraph separators and the bidirectional controls, on write and on
  /// read; other non-ASCII text is kept.
  @Test func labelsRefuseControlsSeparatorsAndBidirectionalControls() throws {
    let vault = try unlocked()
    for scalar: UInt32 in [
      0x00, 0x1f, 0x7f, 0x85, 0x9f, 0x2028, 0x2029, 0x061c, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069,
    ] {
      let label = "ab" + String(Unicode.Scalar(scalar)!) + "cd"
      #expect(throws: TaskVaultError.self, "U+\(String(scalar, radix: 16))") {
        try vault.setItem(secret("v"), named: "x", label: label, class: .afterFirstUnlock)
      }
      #expect(isRefusedInLabels(Unicode.Scalar(scalar)!))
    }
    for allowed in ["Café ☕", "日本語", "a\u{200D}b", "tab-free label"] {
      try vault.setItem(secret("v"), named: "ok", label: allowed, class: .afterFirstUnlock)
      #expect(try vault.items().first { $0.name == "ok" }?.label == allowed)
    }
  }

  @Test func theNoteKeyringMadeAtInitSealsAndOpens() throws {
    let vault = try unlocked()
    let keyring = try vault.noteKeyring()
    #expect(keyring.keys.count == 1)
    let sealed = try SealedValue.seal("buy milk", using: keyring, context: "note/1/body")
    #expect(try SealedValue.open(sealed, using: try machine.open().noteKeyring(), context: "note/1/body") == "buy milk")
  }

  @Test func aNewVaultIsLockedUntilUnlocked() throws {
    let vault = try machine.create()
    #expect(throws: TaskVaultError.locked(reason: .notUnlocked)) { try vault.items() }
    #expect(try vault.status().lockState == .locked(.notUnlocked))
  }

  @Test func unlockServesEveryLaterOpenAndLockEndsIt() throws {
    _ = try unlocked()
    let other = try machine.open()
    #expect(try other.items().isEmpty)
    #expect(try other.status().lockState == .unlocked(until: nil))
    try other.lock()
    #expect(throws: TaskVaultError.locked(reason: .notUnlocked)) { try machine.open().items() }
    #expect(try FileManager.default.contentsOfDirectory(atPath: machine.runtime.url.path).isEmpty)
    #expect(!FileManager.default.fileExists(atPath: machine.vaultDirectory + "/device-only/unlock.session"))
    try other.lock()  // locking a locked vault is fine
  }

  @Test func simulatedRebootLocksTheVault() throws {
    let vault = try unlocked()
    try machine.reboot()
    #expect(throws: TaskVaultError.locked(reason: .machineRestarted)) { try vault.items() }
    #expect(try vault.status().lockState == .locked(.machineRestarted))
  }

  @Test func aChangedBootIDAloneLocksEvenIfTheRuntimeFilesSurvive() throws {
    let vault = try unlocked()
    machine.bootID = SecureRandom.bytes(count: 16)
    #expect(throws: TaskVaultError.locked(reason: .machineRestarted)) { try vault.items() }
  }

  @Test func lostSessionKeyLocksTheVault() throws {
    let vault = try unlocked()
    for name in try FileManager.default.contentsOfDirectory(atPath: machine.runtime.url.path) {
      try FileManager.default.removeItem(atPath: machine.runtime.path(name))
    }
    #expect(throws: TaskVaultError.locked(reason: .sessionKeyGone)) { try vault.items() }
    #expect(try vault.status().lockState == .locked(.sessionKeyGone))
  }

  /// A session key that does not open the session file (another unlock's)
  /// is its own outcome, not "not unlocked".
  @Test func aSessionKeyThatDoesNotOpenTheSessionIsNamed() throws {
    let vault = try unlocked()
    let other = try SessionKeyFile.encode(bootID: machine.bootID, key: try SymmetricKey.generate())
    for name in try FileManager.default.contentsOfDirectory(atPath: machine.runtime.url.path) {
      try other.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: machine.runtime.path(name))) }
    }
    #expect(throws: TaskVaultError.locked(reason: .sessionKeyMismatch)) { try vault.items() }
  }

  /// A session whose device-only wrap key is not the one its master key
  /// derives is refused as a session, not blamed on device.tkv later.
  @Test func aSessionWithAnotherDeviceWrapKeyIsRefusedAsInconsistent() throws {
    let vault = try unlocked()
    let file = try vault.readFile()
    let keys = try vault.sessionKeys(file).keys
    try vault.session.begin(
      file: file, keys: VaultKeys(sync: keys.sync, deviceWrap: try SymmetricKey.generate()), notAfter: 0)
    #expect(throws: TaskVaultError.locked(reason: .sessionInconsistent)) { try vault.items() }
    #expect(try vault.status().lockState == .locked(.sessionInconsistent))
  }

  @Test func expiredTimedUnlockLocks() throws {
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"), for: .seconds(300))
    #expect(try vault.status().lockState == .unlocked(until: Date(timeIntervalSince1970: 1_800_000_300)))
    machine.now += 299
    #expect(try vault.items().isEmpty)
    machine.now += 1
    #expect(throws: TaskVaultError.locked(reason: .expired)) { try vault.items() }
  }

  @Test func aTimedUnlockExpiresForEveryProcess() throws {
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"), for: .seconds(4))
    let otherProcess = try machine.open()
    #expect(try otherProcess.items().isEmpty)
    machine.now += 5
    #expect(throws: TaskVaultError.locked(reason: .expired)) { try otherProcess.items() }
    #expect(throws: TaskVaultError.locked(reason: .expired)) { try machine.open().items() }
  }

  @Test func passphraseChangeRewrapsOnlyAndKeepsItems() throws {
    let vault = try unlocked()
    try vault.setItem(secret("value"), named: "item", class: .afterFirstUnlockThisDeviceOnly)
    let before = try vault.readFile()
    try vault.changePassphrase(from: secret("correct horse"), to: secret("battery staple"))
    let after = try vault.readFile()
    #expect(after.sealed == before.sealed, "no store was re-encrypted")
    #expect(after.generation == before.generation)
    #expect(after.salt != before.salt)
    #expect(after.wrapped != before.wrapped)
    #expect(bytes(of: try vault.item(named: "item").value) == Array("value".utf8), "still unlocked")
    try vault.lock()
    #expect(throws: TaskVaultError.wrongPassphrase) { try vault.unlock(passphrase: secret("correct horse")) }
    try vault.unlock(passphrase: secret("battery staple"))
    #expect(bytes(of: try vault.item(named: "item").value) == Array("value".utf8))
  }

  @Test func passphraseChangeWithTheWrongOldPassphraseWritesNothing() throws {
    let vault = try machine.create()
    let before = try machine.vaultBytes()
    #expect(throws: TaskVaultError.wrongPassphrase) {
      try vault.changePassphrase(from: secret("nope"), to: secret("new"))
    }
    #expect(try machine.vaultBytes() == before)
  }

  @Test func statusShowsTheFastTestPresetAndItsCosts() throws {
    let status = try machine.create().status()
    #expect(status.kdfPreset == .fastTestOnly)
    #expect(status.kdfParameters == PasswordKDF.Parameters(opsLimit: 1, memoryKiB: 8192))
    #expect(status.formatVersion == 1)
    #expect(status.generation == 1)
  }

  @Test func initRefusesToReplaceAVault() throws {
    _ = try machine.create()
    #expect(throws: TaskVaultError.alreadyInitialised(path: machine.vaultDirectory + "/vault.tkv")) {
      _ = try machine.create()
    }
  }

  @Test func vaultDirectoryAndFilesAreOwnerOnly() throws {
    _ = try unlocked()
    for name in ["", "/vault.tkv", "/vault.lock", "/device-only", "/device-only/unlock.session"] {
      let attributes = try FileManager.default.attributesOfItem(atPath: machine.vaultDirectory + name)
      let mode = (attributes[.posixPermissions] as? Int ?? 0o777) & 0o077
      #expect(mode == 0, "\(name)")
    }
  }

  @Test func calibrationNeverGoesBelowTheFloor() throws {
    let parameters = try VaultKDF.calibrate(target: .milliseconds(1))
    #expect(parameters.memoryKiB == 128 << 10)
    #expect(parameters.opsLimit == 3)
    #expect(VaultKDF.check(parameters, preset: .calibrated) == nil)
  }

  @Test func calibrationKeepsMemoryFixedAndPicksPassesInCoarseSteps() {
    // 80 ms per pass: 0.64 s fits 8 passes, so 6; anything from 53 to 106 ms
    // per pass (a factor of two) gives the same 6.
    #expect(VaultKDF.passes(forTarget: 6.4e8, perPass: 8e7) == 6)
    #expect(VaultKDF.passes(forTarget: 6.4e8, perPass: 5.4e7) == 6)
    #expect(VaultKDF.passes(forTarget: 6.4e8, perPass: 1.06e8) == 6)
    #expect(VaultKDF.passes(forTarget: 6.4e8, perPass: 5e7) == 12)
    #expect(VaultKDF.passes(forTarget: 6.4e8, perPass: 1.1e8) == 3)
    #expect(VaultKDF.passes(forTarget: 6.4e8, perPass: 1) == 12)
    #expect(VaultKDF.passes(forTarget: 6.4e8, perPass: 1e9) == 3)
    for perPass in stride(from: 1e6, through: 1e9, by: 7e6) {
      let passes = VaultKDF.passes(forTarget: 6.4e8, perPass: perPass)
      #expect(VaultKDF.passSteps.contains(passes))
      // Never more than the target allows, unless the floor of 3 demands it.
      #expect(passes == 3 || Double(passes) * perPass <= 6.4e8)
    }
  }

  @Test func defaultDirectoryFollowsTaskkeyHomeThenXDGThenHome() {
    #expect(Vault.defaultDirectory(environment: ["TASKKEY_HOME": "/a", "HOME": "/h"]) == "/a")
    #expect(Vault.defaultDirectory(environment: ["XDG_DATA_HOME": "/x", "HOME": "/h"]) == "/x/tasker/keys")
    #expect(
      Vault.defaultDirectory(environment: ["XDG_DATA_HOME": "rel", "HOME": "/h"]) == "/h/.local/share/tasker/keys")
    #expect(Vault.defaultDirectory(environment: [:]) == nil)
  }

  @Test func unlockingDisablesCoreDumps() throws {
    _ = try unlocked()
    #expect(!ProcessHardening.isDumpable)
  }
}

@Suite("Vault: lock always works")
struct LockTests {
  @Test func lockingWorksEvenWhenTheVaultFileIsDamaged() throws {
    let machine = try TestMachine()
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    var bytes = try machine.vaultBytes()
    bytes[0] ^= 0xff
    try machine.writeVault(bytes)
    try vault.lock()
    #expect(try FileManager.default.contentsOfDirectory(atPath: machine.runtime.url.path).isEmpty)
    #expect(!FileManager.default.fileExists(atPath: machine.vaultDirectory + "/device-only/unlock.session"))
  }
}

@Suite("Vault: store limits")
struct StoreLimitTests {
  @Test func moreThan10000ItemsIsRefusedOnWrite() throws {
    let shared = ItemValue(try SecureBytes(zeroedCount: 1))
    let items = (0...VaultLimits.maximumItemCount).map { index in
      StoredItem(
        name: String(format: "item-%05d", index), label: "", itemClass: .afterFirstUnlockThisDeviceOnly, created: 0,
        modified: 0, value: shared)
    }
    #expect(VaultLimits.maximumItemCount == 10_000)
    #expect(throws: TaskVaultError.storeFull(reason: "more than 10000 items")) {
      _ = try StoreContents(keyring: nil, items: items).encode()
    }
    // 10,000 items are written and read back.
    let full = StoreContents(keyring: nil, items: Array(items.dropLast()))
    let decoded = try StoreContents.decode(try full.encode(), store: .deviceOnly)
    #expect(decoded.items.count == 10_000)
    #expect(decoded.index(of: "item-09999") == 9_999 && decoded.index(of: "item-10000") == nil)
  }

  @Test func aStoreAbove8MiBIsRefusedOnWrite() throws {
    let items = try (0..<130).map { index in
      StoredItem(
        name: String(format: "item-%03d", index), label: "", itemClass: .afterFirstUnlockThisDeviceOnly, created: 0,
        modified: 0, value: try SecureBytes(zeroedCount: VaultLimits.maximumValueByteCount))
    }
    #expect(throws: TaskVaultError.storeFull(reason: "the store would exceed 8388608 bytes")) {
      _ = try StoreContents(keyring: nil, items: items).encode()
    }
  }

  @Test func aPlaintextWithNonZeroPaddingOrUnsortedNamesIsRefused() throws {
    let good = try StoreContents(
      keyring: nil,
      items: [
        StoredItem(
          name: "a", label: "", itemClass: .afterFirstUnlockThisDeviceOnly, created: 0, modified: 0, value: secret("1")),
        StoredItem(
          name: "b", label: "", itemClass: .afterFirstUnlockThisDeviceOnly, created: 0, modified: 0, value: secret("2")),
      ]
    ).encode()
    _ = try StoreContents.decode(good, store: .deviceOnly)
    let padded = try SecureBytes(copying: good.withUnsafeBytes { $0 })
    padded.withUnsafeMutableBytes { $0[$0.count - 1] = 1 }
    #expect(throws: ParseFailure.self) { _ = try StoreContents.decode(padded, store: .deviceOnly) }
    let swapped = try SecureBytes(copying: good.withUnsafeBytes { $0 })
    // Item records start at offset 12; swap the one-byte names "a" and "b".
    swapped.withUnsafeMutableBytes { raw in
      let second = 12 + (1 + 1 + 1 + 2 + 8 + 8 + 4 + 1)
      raw[14] = UInt8(ascii: "b")
      raw[second + 2] = UInt8(ascii: "a")
    }
    #expect(throws: ParseFailure.self) { _ = try StoreContents.decode(swapped, store: .deviceOnly) }
    #expect(throws: ParseFailure.self) { _ = try StoreContents.decode(good, store: .synchronisable) }
  }
}

@Suite("Vault: nothing on disk or in tmpfs in the clear")
struct AtRestTests {
  @Test func noFileHoldsThePassphraseAMasterKeyANoteKeyOrAValueInTheClear() throws {
    let machine = try TestMachine()
    let vault = try machine.create("a rather memorable passphrase")
    try vault.unlock(passphrase: secret("a rather memorable passphrase"))
    try vault.setItem(secret("sk-device-value-0123456789"), named: "d", class: .afterFirstUnlockThisDeviceOnly)
    try vault.setItem(secret("sync-value-0123456789"), named: "s", class: .afterFirstUnlock)
    let masterKeys = try vault.sessionKeys(try vault.readFile()).keys.all.map { key in key.withUnsafeBytes { Array($0) }
    }
    let noteKey = try vault.noteKeyring().primary.key.withUnsafeBytes { Array($0) }
    var files = [String]()
    for directory in [machine.vaultDirectory, machine.vaultDirectory + "/device-only", machine.runtime.url.path] {
      for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name != "device-only" {
        files.append(directory + "/" + name)
      }
    }
    #expect(
      files.count == 7,
      "vault.tkv, vault.lock, device-only/{device.tkv, unlock.session, CACHEDIR.TAG, .nobackup} and the session key")
    for path in files {
      let contents = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
      for needle in [
        Array("a rather memorable passphrase".utf8), Array("sk-device-value".utf8), Array("sync-value".utf8),
        noteKey,
      ] + masterKeys {
        #expect(!contains(contents, needle), "\(path)")
      }
    }
  }
}
