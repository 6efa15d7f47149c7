import Foundation
import TaskCrypto
import TaskKeyTestSupport
import TaskVault
import Testing

@testable import AssistantKeys

/// The product rule: the registry lives in the vault's directory and its
/// integrity key is a device-only vault item.
@Suite struct VaultRegistryTests {
  /// A fresh vault (fast test KDF), unlocked; locked again on release.
  final class UnlockedVault {
    let home: TemporaryDirectory
    let vault: Vault

    init() throws {
      home = try TemporaryDirectory()
      let passphrase = try Array("correct horse".utf8).withUnsafeBytes { try SecureBytes(copying: $0) }
      vault = try Vault.create(at: home.path("keys"), passphrase: passphrase, preset: .fastTestOnly)
      try vault.unlock(passphrase: passphrase)
    }

    deinit { try? vault.lock() }
  }

  @Test func firstOpenMakesADeviceOnlyIntegrityKeyAndTheRegistryLivesInTheDeviceOnlyDirectory() throws {
    let home = try UnlockedVault()
    let registry = try AssistantKeyRegistry(vault: home.vault)
    let minted = try registry.mint(name: "agent")
    let item = try home.vault.item(named: AssistantKeyRegistry.integrityKeyItemName)
    #expect(item.attributes.itemClass == .afterFirstUnlockThisDeviceOnly)
    #expect(item.value.count == 32)
    #expect(FileManager.default.fileExists(atPath: home.vault.directory + "/device-only/assistant-keys.registry"))
    // Another process finds the same key and the same registry.
    #expect(
      try AssistantKeyRegistry(vault: Vault(at: home.vault.directory)).verify(minted.key.testString).name == "agent")
    // The registry is authenticated under the vault item's key, not some other.
    let key = try SymmetricKey(bytes: item.value)
    #expect(try AssistantKeyRegistry(directory: home.vault.deviceOnlyDirectory, integrityKey: key).keys().count == 1)
  }

  @Test func lockedVaultIsVaultLocked() throws {
    let home = try UnlockedVault()
    _ = try AssistantKeyRegistry(vault: home.vault).mint(name: "agent")
    try home.vault.lock()
    #expect(assistantError { _ = try AssistantKeyRegistry(vault: home.vault) } == .vaultLocked)
  }

  @Test func registryWhoseKeyItemWasRemovedFailsClosed() throws {
    let home = try UnlockedVault()
    let minted = try AssistantKeyRegistry(vault: home.vault).mint(name: "agent")
    try home.vault.removeItem(named: AssistantKeyRegistry.integrityKeyItemName)
    let error = assistantError { _ = try AssistantKeyRegistry(vault: home.vault).verify(minted.key.testString) }
    guard case .registryDamaged(.integrityKeyUnavailable)? = error else {
      Issue.record("got \(String(describing: error))")
      return
    }
    // It is not silently replaced by a new key either.
    #expect(throws: TaskVaultError.itemNotFound(name: AssistantKeyRegistry.integrityKeyItemName)) {
      try home.vault.item(named: AssistantKeyRegistry.integrityKeyItemName)
    }
  }

  @Test func integrityKeyThatMaySyncOrHasTheWrongSizeIsRefused() throws {
    let home = try UnlockedVault()
    let value = try SecureBytes.random(count: 32)
    try home.vault.setItem(value, named: AssistantKeyRegistry.integrityKeyItemName, class: .afterFirstUnlock)
    let error = assistantError { _ = try AssistantKeyRegistry(vault: home.vault) }
    guard case .registryDamaged(.integrityKeyUnavailable(let reason))? = error else {
      Issue.record("got \(String(describing: error))")
      return
    }
    #expect(reason.contains("not device-only"))
    try home.vault.removeItem(named: AssistantKeyRegistry.integrityKeyItemName)
    try home.vault.setItem(
      try SecureBytes.random(count: 16), named: AssistantKeyRegistry.integrityKeyItemName,
      class: .afterFirstUnlockThisDeviceOnly)
    guard
      case .registryDamaged(.integrityKeyUnavailable)? = assistantError({
        _ = try AssistantKeyRegistry(vault: home.vault)
      })
    else {
      Issue.record("a 16-byte key was accepted")
      return
    }
  }
}

/// Rollback: the vault remembers the registry's newest generation.
@Suite struct RegistryRollbackTests {
  typealias UnlockedVault = VaultRegistryTests.UnlockedVault

  func registryBytes(_ home: UnlockedVault) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: home.vault.deviceOnlyDirectory + "/assistant-keys.registry"))
  }

  func putBack(_ bytes: Data, _ home: UnlockedVault, file: String = "assistant-keys.registry") throws {
    // A new inode, as a restore from a copy would make.
    let path = home.vault.deviceOnlyDirectory + "/" + file
    try FileManager.default.removeItem(atPath: path)
    #expect(FileManager.default.createFile(atPath: path, contents: bytes, attributes: [.posixPermissions: 0o600]))
  }

  @Test func puttingAnOlderRegistryBackIsRefusedAndDoesNotReviveARevokedKey() throws {
    let home = try UnlockedVault()
    let minted = try AssistantKeyRegistry(vault: home.vault).mint(name: "agent")
    let beforeRevocation = try registryBytes(home)
    _ = try AssistantKeyRegistry(vault: home.vault).revoke(minted.record.id)
    try putBack(beforeRevocation, home)
    let error = assistantError { _ = try AssistantKeyRegistry(vault: home.vault).verify(minted.key.testString) }
    #expect(error == .registryDamaged(.rolledBack(found: 1, expected: 2)))
    #expect(error?.description.contains("an older copy was put back") == true)
  }

  @Test func aRunningInstanceRefusesARollbackEvenAfterTheVaultIsLocked() throws {
    let home = try UnlockedVault()
    let registry = try AssistantKeyRegistry(vault: home.vault)
    let minted = try registry.mint(name: "agent")
    let beforeRevocation = try registryBytes(home)
    _ = try registry.revoke(minted.record.id)
    try home.vault.lock()
    try putBack(beforeRevocation, home)
    #expect(
      assistantError { _ = try registry.verify(minted.key.testString) }
        == .registryDamaged(.rolledBack(found: 1, expected: 2)))
  }

  @Test func aDeletedRegistryStartsEmptyAndNewWritesContinueAboveTheRememberedGeneration() throws {
    let home = try UnlockedVault()
    let first = try AssistantKeyRegistry(vault: home.vault).mint(name: "agent")
    _ = try AssistantKeyRegistry(vault: home.vault).mint(name: "other")
    try FileManager.default.removeItem(atPath: home.vault.deviceOnlyDirectory + "/assistant-keys.registry")
    #expect(
      assistantError { _ = try AssistantKeyRegistry(vault: home.vault).verify(first.key.testString) } == .unknownKey)
    let again = try AssistantKeyRegistry(vault: home.vault).mint(name: "agent")
    #expect(try AssistantKeyRegistry(vault: home.vault).verify(again.key.testString).name == "agent")
    let remembered = try home.vault.item(named: AssistantKeyRegistry.generationItemName)
    #expect(remembered.attributes.itemClass == .afterFirstUnlockThisDeviceOnly)
    #expect(remembered.value.withUnsafeBytes { $0.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } } == 3)
  }

  @Test func aDamagedGenerationItemRefusesEveryRegistry() throws {
    let home = try UnlockedVault()
    let minted = try AssistantKeyRegistry(vault: home.vault).mint(name: "agent")
    let bogus = try Array("not eight bytes".utf8).withUnsafeBytes { try SecureBytes(copying: $0) }
    try home.vault.setItem(
      bogus, named: AssistantKeyRegistry.generationItemName, class: .afterFirstUnlockThisDeviceOnly)
    let error = assistantError { _ = try AssistantKeyRegistry(vault: home.vault).verify(minted.key.testString) }
    guard case .registryDamaged(.rolledBack)? = error else {
      Issue.record("got \(String(describing: error))")
      return
    }
  }

  /// The documented limit (SECURITY.md §9.13): someone who can write the
  /// whole device-only directory and kept an older copy of it, registry and
  /// device-only store together, can still put both back.
  @Test func puttingBackTheRegistryAndTheDeviceOnlyStoreTogetherIsNotDetected() throws {
    let home = try UnlockedVault()
    let minted = try AssistantKeyRegistry(vault: home.vault).mint(name: "agent")
    let oldRegistry = try registryBytes(home)
    let oldStore = try Data(contentsOf: URL(fileURLWithPath: home.vault.deviceOnlyDirectory + "/device.tkv"))
    _ = try AssistantKeyRegistry(vault: home.vault).revoke(minted.record.id)
    try putBack(oldRegistry, home)
    try putBack(oldStore, home, file: "device.tkv")
    #expect(
      try AssistantKeyRegistry(vault: Vault(at: home.vault.directory)).verify(minted.key.testString).name == "agent")
  }
}
