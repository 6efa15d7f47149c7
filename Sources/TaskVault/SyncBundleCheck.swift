import TaskCrypto

/// What a sync bundle holds, read without a vault: its note key ids and
/// primary, and its item names. No key bytes.
public struct SyncBundleSummary: Sendable, Equatable {
  /// The note key ids, in bundle order.
  public let noteKeyIDs: [KeyID]
  /// The bundle's primary note key id.
  public let primaryID: KeyID
  /// The synchronisable items' names.
  public let itemNames: [String]
}

extension Vault {
  /// Opens a sync bundle with its passphrase and checks it, without a
  /// vault and without writing anything: what `taskkey init --from-bundle`
  /// runs before it makes a vault, so a wrong passphrase or a damaged
  /// bundle leaves nothing behind.
  ///
  /// - Parameters:
  ///   - bundle: the bundle bytes.
  ///   - passphrase: the passphrase it was exported under.
  /// - Returns: the bundle's key ids, primary and item names.
  /// - Throws: `TaskVaultError.wrongPassphrase`, `.damaged`, `.tampered`,
  ///   `.unsupportedVersion`, `.emptyPassphrase`, `.passphraseTooLong`.
  public static func checkSyncBundle(_ bundle: [UInt8], passphrase: SecureBytes) throws -> SyncBundleSummary {
    try VaultCodec.checkPassphrase(passphrase)
    let contents = try SyncBundle.open(bundle, passphrase: passphrase).contents
    guard let keyring = contents.keyring else {
      throw TaskVaultError.damaged(path: SyncBundle.displayName, reason: "no keyring")
    }
    return SyncBundleSummary(
      noteKeyIDs: keyring.ids, primaryID: keyring.primaryID, itemNames: contents.items.map(\.name))
  }
}
