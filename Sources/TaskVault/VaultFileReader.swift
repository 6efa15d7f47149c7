import FoundationEssentials
import TaskCrypto

/// The decrypted contents of a vault file or a sync bundle.
public struct VaultContents: Sendable {
  /// The vault id (of the exporting vault, for a bundle), 32 hex digits.
  public let vaultID: String
  /// The header's generation; nil for a sync bundle.
  public let generation: UInt64?
  /// How the KDF costs were chosen.
  public let kdfPreset: KDFPreset
  /// The Argon2id costs.
  public let kdfParameters: PasswordKDF.Parameters
  /// The note keyring of the synchronisable store.
  public let noteKeyring: Keyring
  /// Ids of note keys retired from it (tombstones), ascending.
  public let retiredKeyIDs: [KeyID]
  /// Every item of both stores (a bundle: the synchronisable store only),
  /// sorted by name.
  public let items: [VaultItem]
}

/// Opens vault files and sync bundles held in memory, without a vault
/// directory, a lock or an unlock session: for audits, vector checks and
/// recovery. It applies exactly the checks and error causes of `Vault`.
public enum VaultFileReader {
  /// Opens the bytes of a `vault.tkv`, and optionally of the device-only
  /// file `device-only/device.tkv` that belongs to it, with the passphrase.
  ///
  /// - Parameters:
  ///   - bytes: the whole vault file.
  ///   - deviceOnlyFile: the whole device-only file, or nil when there is
  ///     none (the device-only store is then empty).
  ///   - passphrase: the vault passphrase.
  /// - Returns: the header facts, the note keyring and every item.
  /// - Throws: `TaskVaultError.damaged`, `.unsupportedVersion`,
  ///   `.wrongPassphrase`, `.tampered`, `.emptyPassphrase`,
  ///   `.passphraseTooLong`, with the path `<vault file>` or
  ///   `<vault file> (device-only)`.
  public static func openVaultFile(_ bytes: [UInt8], deviceOnlyFile: [UInt8]? = nil, passphrase: SecureBytes) throws
    -> VaultContents
  {
    let opened = try VaultCodec.open(
      bytes, deviceOnlyFile: deviceOnlyFile, passphrase: passphrase, vaultPath: vaultLabel,
      devicePath: vaultLabel + " (device-only)")
    let file = opened.file
    return VaultContents(
      vaultID: Hex.encode(file.vaultID), generation: file.generation, kdfPreset: file.preset, kdfParameters: file.kdf,
      noteKeyring: try opened.stores.synchronisable.noteKeyring(path: vaultLabel),
      retiredKeyIDs: opened.stores.synchronisable.retired,
      items: try opened.stores.sortedItems.map { VaultItem(attributes: $0.attributes, value: try $0.value.copied()) })
  }

  /// Opens the bytes of a sync bundle with the passphrase it was exported
  /// under.
  ///
  /// - Returns: the exporting vault's id, the KDF, the note keyring and the
  ///   synchronisable items.
  /// - Throws: as `Vault.importSyncBundle`, with the path `sync bundle`.
  public static func openSyncBundle(_ bytes: [UInt8], passphrase: SecureBytes) throws -> VaultContents {
    try VaultCodec.checkPassphrase(passphrase)
    let opened = try SyncBundle.open(bytes, passphrase: passphrase)
    guard let keyring = opened.contents.keyring else {
      throw TaskVaultError.damaged(path: SyncBundle.displayName, reason: "no keyring")
    }
    return VaultContents(
      vaultID: Hex.encode(opened.bundle.vaultID), generation: nil, kdfPreset: opened.bundle.preset,
      kdfParameters: opened.bundle.kdf, noteKeyring: keyring, retiredKeyIDs: opened.contents.retired,
      items: try opened.contents.items.map { VaultItem(attributes: $0.attributes, value: try $0.value.copied()) })
  }

  /// How errors name a vault file read from memory.
  static let vaultLabel = "<vault file>"

  /// What a vault file's header says, read without a passphrase.
  public struct Header: Sendable, Equatable {
    /// The vault id, 16 bytes.
    public let vaultID: [UInt8]
    /// The generation of the synchronisable store.
    public let generation: UInt64
  }

  /// The smallest and the largest vault file this build reads, in bytes.
  public static let vaultFileByteCounts = VaultFile.minimumByteCount...VaultFile.maximumByteCount

  /// Checks everything in the bytes of a `vault.tkv` that needs no key
  /// (header, checksum, structure, every cap) and returns its id and
  /// generation.
  ///
  /// - Parameter label: how errors name the file.
  /// - Throws: `TaskVaultError.damaged`, `.unsupportedVersion`.
  public static func header(ofVaultFile bytes: [UInt8], label: String) throws -> Header {
    let file = try VaultFile.parse(bytes, path: label)
    return Header(vaultID: file.vaultID, generation: file.generation)
  }
}
