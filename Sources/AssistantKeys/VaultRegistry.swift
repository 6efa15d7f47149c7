import FoundationEssentials
import TaskCrypto
import TaskSystem
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
    // Both reserved items from one read of the vault (issue 14, goal 6):
    // reading each would read and decrypt every vault file twice.
    let found = try Self.vaultCall { try vault.items(named: [Self.integrityKeyItemName, Self.generationItemName]) }
    let key = try Self.integrityKey(in: vault, files: files, stored: found[Self.integrityKeyItemName])
    // The anchor's first read (while opening) is the generation just read;
    // once open, every read reads the vault again.
    let opening = FirstRead(Self.generation(of: found[Self.generationItemName]))
    try self.init(
      directory: vault.deviceOnlyDirectory, integrityKey: key, anchor: Self.generationAnchor(in: vault, opening),
      clock: Date.init)
    _ = opening.take()
  }

  /// The device-only vault item that remembers the registry's newest
  /// generation (8 bytes, big-endian), so that putting an older authentic
  /// registry file back is refused. It lives in `device-only/device.tkv`,
  /// sealed under the vault's keys.
  public static let generationItemName = reservedItemPrefix + "registry-generation"

  /// Reads and advances `generationItemName`. A missing item reads as 0 (a
  /// new or restored vault); one that is not 8 device-only bytes reads as
  /// the largest generation, so every registry is refused (fail closed).
  /// A read while `opening` still holds a value returns it (the item as
  /// `init(vault:)` read it moments before); every other read reads the
  /// vault again.
  private static func generationAnchor(in vault: Vault, _ opening: FirstRead) -> GenerationAnchor {
    let readVault: @Sendable () throws -> UInt64 = {
      do {
        return generation(of: try vault.item(named: generationItemName))
      } catch TaskVaultError.itemNotFound {
        return generation(of: nil)
      }
    }
    let read: @Sendable () throws -> UInt64 = { try opening.take() ?? readVault() }
    return GenerationAnchor(
      read: read,
      advance: { generation in
        guard try readVault() < generation else { return }
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

  /// The generation an anchor item holds: 0 when missing, the largest
  /// generation when it is not 8 device-only bytes.
  private static func generation(of item: VaultItem?) -> UInt64 {
    guard let item else { return 0 }
    guard item.attributes.itemClass == .afterFirstUnlockThisDeviceOnly, item.value.count == 8 else {
      return .max
    }
    return item.value.withUnsafeBytes { $0.reduce(0) { $0 << 8 | UInt64($1) } }
  }

  /// The integrity key: `stored` (the item as `init(vault:)` read it), or,
  /// when there is none, the item read again under the registry's lock, or
  /// a fresh key stored device-only when neither the item nor a registry
  /// exists.
  private static func integrityKey(in vault: Vault, files: RegistryFiles, stored: VaultItem?) throws -> SymmetricKey {
    if let stored { return try checkedIntegrityKey(stored) }
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
    return try checkedIntegrityKey(item)
  }

  /// The key an integrity-key item holds, refused unless device-only and 32 bytes.
  private static func checkedIntegrityKey(_ item: VaultItem) throws -> SymmetricKey {
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

/// A value handed out once, to the first caller that asks (thread-safe).
final class FirstRead: @unchecked Sendable {
  private let lock = ThreadLock()
  private var value: UInt64?

  init(_ value: UInt64) { self.value = value }

  /// The value the first time; nil after.
  func take() -> UInt64? {
    lock.withLock {
      defer { value = nil }
      return value
    }
  }
}
