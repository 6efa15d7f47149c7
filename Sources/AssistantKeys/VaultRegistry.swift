import TaskCrypto
import TaskVault

extension AssistantKeyRegistry {
  /// The device-only vault item that holds the registry's integrity key:
  /// `assistant-keys/registry-integrity-key`, 32 bytes from the CSPRNG.
  public static let integrityKeyItemName = "assistant-keys/registry-integrity-key"

  /// Opens the registry of a vault's device-only store, as the product
  /// requires: the registry files live in the vault's `device-only/`
  /// directory (next to the device-only store, excluded from backups and sync bundles), and
  /// their integrity key is the device-only item `integrityKeyItemName`.
  /// The registry files live in `vault.deviceOnlyDirectory`, which carries
  /// the backup exclusion markers, so system backups skip them; a vault
  /// restored without that directory starts with an empty registry.
  ///
  /// The first time, when neither the item nor a registry exists, a fresh
  /// key is made and stored device-only, under the registry's lock so that
  /// two processes cannot each make one.
  ///
  /// - Parameter vault: an opened vault, which must be unlocked.
  /// - Throws: `AssistantKeyError.vaultLocked` when the vault is locked;
  ///   `.registryDamaged(.integrityKeyUnavailable)` when a registry exists
  ///   but the item is missing, not device-only or not 32 bytes (every key
  ///   is then refused); the errors of `init(directory:integrityKey:)`;
  ///   `TaskVaultError` for any other vault failure (not initialised,
  ///   damaged, unsafe permissions).
  public convenience init(vault: Vault) throws {
    try vault.prepareDeviceOnlyDirectory()
    let files = RegistryFiles(directory: vault.deviceOnlyDirectory, fault: nil)
    let key = try Self.integrityKey(in: vault, files: files)
    try self.init(directory: vault.deviceOnlyDirectory, integrityKey: key)
  }

  private static func integrityKey(in vault: Vault, files: RegistryFiles) throws -> SymmetricKey {
    if let key = try storedIntegrityKey(in: vault) { return key }
    return try files.withLock {
      if let key = try storedIntegrityKey(in: vault) { return key }
      guard try files.identity(of: files.registryPath) == nil else {
        throw AssistantKeyError.registryDamaged(
          .integrityKeyUnavailable(reason: "the vault has no item '\(integrityKeyItemName)', but a registry exists"))
      }
      let bytes: SecureBytes
      do {
        bytes = try SecureBytes.random(count: SymmetricKey.byteCount)
      } catch {
        throw AssistantKeyError.systemResource("\(error)")
      }
      try vaultCall {
        try vault.setItem(
          bytes, named: integrityKeyItemName, label: "TaskKey assistant key registry integrity key",
          class: .afterFirstUnlockThisDeviceOnly)
      }
      return try SymmetricKey(bytes: bytes)
    }
  }

  /// The stored key, nil when the item does not exist.
  private static func storedIntegrityKey(in vault: Vault) throws -> SymmetricKey? {
    let item: VaultItem
    do {
      item = try vaultCall { try vault.item(named: integrityKeyItemName) }
    } catch TaskVaultError.itemNotFound {
      return nil
    }
    guard item.attributes.itemClass == .afterFirstUnlockThisDeviceOnly else {
      throw AssistantKeyError.registryDamaged(
        .integrityKeyUnavailable(reason: "the item '\(integrityKeyItemName)' is not device-only"))
    }
    guard let key = try? SymmetricKey(bytes: item.value) else {
      throw AssistantKeyError.registryDamaged(
        .integrityKeyUnavailable(reason: "the item '\(integrityKeyItemName)' is not 32 bytes"))
    }
    return key
  }

  /// Runs a vault call, turning its locked error into `.vaultLocked`.
  private static func vaultCall<Result>(_ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch TaskVaultError.locked {
      throw AssistantKeyError.vaultLocked
    }
  }
}
