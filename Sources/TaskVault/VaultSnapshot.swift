import FoundationEssentials
import TaskCrypto
import TaskSystem

/// A checked copy of a vault's `vault.tkv` (the synchronisable store only)
/// with the key that authenticates a backup of it; what `BackupRules`
/// puts into and takes out of a backup file.
public struct VaultFileSnapshot: Sendable {
  /// The exact bytes of `vault.tkv`, format version 1.
  public let bytes: [UInt8]
  /// The vault id, 16 bytes.
  public let vaultID: [UInt8]
  /// The generation of `vault.tkv`.
  public let generation: UInt64
  /// How many note keys the keyring holds.
  public let noteKeyCount: Int
  /// The synchronisable items' names, sorted.
  public let itemNames: [String]
  /// HMAC-SHA256(key = the synchronisable master key, "TaskKey backup
  /// authentication key v1" || vault id): only someone who can open the
  /// vault file can make or check a backup's tag.
  public let backupAuthenticationKey: SymmetricKey
}

extension Vault {
  /// The label of the backup authentication key derivation (36 bytes).
  static let backupKeyLabel = Array("TaskKey backup authentication key v1".utf8)

  /// Reads `vault.tkv` under the shared lock and checks it with the unlock
  /// session's key. The device-only file is never read.
  ///
  /// - Returns: the file's bytes, facts and backup authentication key.
  /// - Throws: `TaskVaultError.locked` and the errors of reading the file.
  public func snapshotForBackup() throws -> VaultFileSnapshot {
    let lock = try Files.lock(layout.lockFile, exclusive: false)
    defer { lock.release() }
    guard let bytes = try Files.readPrivate(layout.vaultFile, limit: VaultFile.maximumByteCount) else {
      throw TaskVaultError.notInitialised(path: layout.vaultFile)
    }
    let file = try VaultFile.parse(bytes, path: layout.vaultFile)
    let keys = try sessionKeys(file).keys
    let store = try VaultCodec.openSynchronisable(file, keys: keys, path: layout.vaultFile)
    return try Self.snapshot(bytes, file: file, keys: keys, store: store)
  }

  /// Opens the bytes of a `vault.tkv` with its passphrase, as `unlock`
  /// would, without a directory.
  ///
  /// - Throws: as `VaultFileReader.openVaultFile`, with the path `label`.
  public static func openSnapshot(_ bytes: [UInt8], passphrase: SecureBytes, label: String) throws
    -> VaultFileSnapshot
  {
    // The device-only file is never read: `deviceOnlyFile: nil`.
    let opened = try VaultCodec.open(
      bytes, deviceOnlyFile: nil, passphrase: passphrase, vaultPath: label, devicePath: label)
    return try snapshot(bytes, file: opened.file, keys: opened.keys, store: opened.stores.synchronisable)
  }

  private static func snapshot(_ bytes: [UInt8], file: VaultFile, keys: VaultKeys, store: StoreContents) throws
    -> VaultFileSnapshot
  {
    let key = try wrapCrypto { try HMACSHA256.deriveKey(from: keys.sync, data: backupKeyLabel + file.vaultID) }
    return VaultFileSnapshot(
      bytes: bytes, vaultID: file.vaultID, generation: file.generation, noteKeyCount: store.keyring?.keys.count ?? 0,
      itemNames: store.items.map(\.name), backupAuthenticationKey: key)
  }

  /// Makes a vault from a snapshot in a directory that holds none: the
  /// directory (0700), `vault.tkv` written durably, and `device-only/`
  /// with its exclusion markers. The device-only store starts empty and
  /// nothing is unlocked.
  ///
  /// - Throws: `TaskVaultError.alreadyInitialised` when `vault.tkv`
  ///   exists, `.system`.
  public static func install(_ snapshot: VaultFileSnapshot, at directory: String) throws -> Vault {
    let vault = try prepareNew(at: directory, environment: .production)
    let lock = try Files.lock(vault.layout.lockFile, exclusive: true)
    defer { lock.release() }
    try vault.refuseExistingVault()
    try vault.prepareDeviceOnlyDirectory()
    try snapshot.bytes.withUnsafeBytes { try vault.environment.replaceFile(vault.layout.vaultFile, with: $0) }
    return try Vault(at: directory)
  }
}
