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
