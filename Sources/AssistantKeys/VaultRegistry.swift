import Foundation
import TaskCrypto
import TaskVault

extension AssistantKeyRegistry {
  /// The device-only vault item that holds the registry's integrity key:
  /// `assistant-keys/registry-integrity-key`, 32 bytes from the CSPRNG.
  public static let integrityKeyItemName = reservedItemPrefix + "registry-integrity-key"

  /// The vault item namespace kept for the registry's own items (its
  /// integrity key and generation anchor). `taskkey item` refuses to set,
  /// get or remove names in it and does not list them.
  public static let reservedItemPrefix = "assistant-keys/"

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
  ///   `.vault` for any other vault failure (not initialised, damaged,
  ///   unsafe permissions).
  public convenience init(vault: Vault) throws {
    try Self.vaultCall { try vault.prepareDeviceOnlyDirectory() }
    let files = RegistryFiles(directory: vault.deviceOnlyDirectory)
    let key = try Self.integrityKey(in: vault, files: files)
    try self.init(
      directory: vault.deviceOnlyDirectory, integrityKey: key, anchor: Self.generationAnchor(in: vault),
      clock: Date.init)
  }

  /// The device-only vault item that remembers the registry's newest
  /// generation (8 bytes, big-endian), so that putting an older authentic
  /// registry file back is refused. It lives in `device-only/device.tkv`,
  /// sealed under the vault's keys.
  public static let generationItemName = reservedItemPrefix + "registry-generation"

  /// Reads and advances `generationItemName`. A missing item reads as 0 (a
  /// new or restored vault); one that is not 8 device-only bytes reads as
  /// the largest generation, so every registry is refused (fail closed).
  private static func generationAnchor(in vault: Vault) -> GenerationAnchor {
    let read: @Sendable () throws -> UInt64 = {
      let item: VaultItem
      do {
        item = try vault.item(named: generationItemName)
      } catch TaskVaultError.itemNotFound {
        return 0
      }
      guard item.attributes.itemClass == .afterFirstUnlockThisDeviceOnly, item.value.count == 8 else {
        return .max
      }
      return item.value.withUnsafeBytes { $0.reduce(0) { $0 << 8 | UInt64($1) } }
    }
    return GenerationAnchor(
      read: read,
      advance: { generation in
        guard try read() < generation else { return }
        let bytes = try SecureBytes(zeroedCount: 8)
        bytes.withUnsafeMutableBytes { out in
          for index in 0..<8 { out[index] = UInt8(truncatingIfNeeded: generation >> (56 - 8 * index)) }
        }
        try vaultCall {
          try vault.setItem(
            bytes, named: generationItemName, label: "TaskKey assistant key registry generation",
            class: .afterFirstUnlockThisDeviceOnly)
        }
      })
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
      } catch let error as TaskCryptoError {
        throw AssistantKeyError.crypto(error)
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
    } catch AssistantKeyError.vault(.itemNotFound) {
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

  /// Runs a vault call: its locked error is `.vaultLocked`, any other is
  /// wrapped as `.vault`.
  static func vaultCall<Result>(_ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch TaskVaultError.locked {
      throw AssistantKeyError.vaultLocked
    } catch let error as TaskVaultError {
      throw AssistantKeyError.vault(error)
    }
  }
}
