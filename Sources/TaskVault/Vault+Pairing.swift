import FoundationEssentials
import TaskCrypto

/// What a pairing carried, as the joining device wrote it (counts and ids,
/// never a value).
public struct PairedStoreSummary: Sendable, Equatable {
  /// Note keys received, in keyring order.
  public var keyIDs: [KeyID]
  /// The primary note key, now this vault's primary too.
  public var primaryID: KeyID
  /// Retired key ids received.
  public var retiredKeyIDs: [KeyID]
  /// Names of the synchronisable items received.
  public var itemNames: [String]
}

extension Vault {
  /// The synchronisable store's plaintext encoding (docs/formats/vault.md,
  /// "Store plaintext"), for `taskkey pair offer` to send over its channel:
  /// the note keyring with its retired ids and the items of class
  /// `.afterFirstUnlock`. Only `vault.tkv` and the unlock session are read;
  /// the device-only file, which holds device-only items and the assistant
  /// key registry's keys, is never opened.
  ///
  /// - Returns: the encoding in locked memory, and what it holds.
  /// - Throws: `TaskVaultError.locked`, `.damaged`, `.tampered`, `.system`.
  public func synchronisableStoreForPairing() throws -> (encoding: SecureBytes, summary: PairedStoreSummary) {
    let store = try readSynchronisable()
    return (try store.encode(), try Self.summary(of: store, path: layout.vaultFile))
  }

  /// Makes a new vault at `directory` that holds exactly the synchronisable
  /// store `encoding` received by pairing, under this device's own new
  /// passphrase, and leaves it unlocked.
  ///
  /// The encoding is decoded strictly (as a store of the vault format)
  /// before anything is written, and the vault appears whole or not at
  /// all: the directory may be made, but `vault.tkv`, which alone makes a
  /// vault, is written last through the one durable replace (temporary
  /// file, fsync, rename); a process killed before leaves no vault.
  ///
  /// - Parameters:
  ///   - directory: the new vault's directory (missing parents are made 0700).
  ///   - passphrase: this vault's passphrase, 1 to 1024 bytes.
  ///   - preset: `.calibrated` for real use; `.fastTestOnly` for tests.
  ///   - encoding: the synchronisable store's plaintext.
  /// - Returns: the vault, unlocked, and what it now holds.
  /// - Throws: `TaskVaultError.damaged` (path "paired store") when the
  ///   encoding is not a synchronisable store, `.alreadyInitialised`,
  ///   `.emptyPassphrase`, `.passphraseTooLong`, `.system`.
  public static func createPaired(
    at directory: String, passphrase: SecureBytes, preset: KDFPreset, encoding: SecureBytes
  ) throws -> (vault: Vault, summary: PairedStoreSummary) {
    try VaultCodec.checkPassphrase(passphrase)
    let store: StoreContents
    do {
      store = try StoreContents.decode(encoding, store: .synchronisable)
    } catch let failure as ParseFailure {
      throw TaskVaultError.damaged(path: pairedStoreName, reason: failure.reason)
    }
    let summary = try summary(of: store, path: pairedStoreName)
    let vault = try writeNew(
      at: directory, passphrase: passphrase, preset: preset, environment: .production, unlocking: true
    ) { store }
    return (vault, summary)
  }

  /// How errors name a store received by pairing, which has no path.
  static let pairedStoreName = "paired store"

  private static func summary(of store: StoreContents, path: String) throws -> PairedStoreSummary {
    let keyring = try store.noteKeyring(path: path)
    return PairedStoreSummary(
      keyIDs: keyring.ids, primaryID: keyring.primaryID, retiredKeyIDs: store.retired,
      itemNames: store.items.map(\.name))
  }
}
