import TaskCrypto

/// One written state of a vault's synchronisable store, `vault.tkv`, the
/// file that holds the note keyring: its generation and the SHA-256
/// checksum the file ends with.
///
/// Every change of the note keyring (`taskkey rotate`, `promote`,
/// `retire`, a sync import, a restore) writes a new `vault.tkv`, so a
/// process that read the keyring together with its revision knows the
/// keyring is still the one on disk for as long as the revision is
/// unchanged: reading a revision is one small file read under the shared
/// lock, with no passphrase, no unlock session and no key unwrapped. Two
/// revisions are equal only when generation and checksum both are; a
/// different revision says only that the file was rewritten (a passphrase
/// change or an item's change also does), so the caller reads the keyring
/// again and compares what it needs. Nothing in a revision is secret.
public struct VaultRevision: Sendable, Hashable, CustomStringConvertible {
  /// The synchronisable store's generation, as the file's header states it.
  public let generation: UInt64
  /// The file's trailing SHA-256 checksum (of every byte before it).
  let checksum: [UInt8]

  /// `generation N`.
  public var description: String { "generation \(generation)" }
}

extension Vault {
  /// The revision of `vault.tkv` now, read under the shared lock without
  /// unwrapping any key: it works on a locked vault too.
  ///
  /// - Returns: the file's generation and checksum.
  /// - Throws: `TaskVaultError.notInitialised` (no `vault.tkv`), `.damaged`
  ///   (a header or checksum that does not parse), `.unsupportedVersion`,
  ///   `.system` (a file that is not private to the user, a failed call).
  public func revision() throws -> VaultRevision {
    let lock = try Files.lock(layout.lockFile, exclusive: false)
    defer { lock.release() }
    return try readRevisedFile().revision
  }

  /// The note keyring with the revision of the very file it was read from
  /// (one read under one shared lock; the device-only file is not opened,
  /// as for `noteKeyring()`), so that a later `revision()` equal
  /// to this one proves the keyring has not changed since.
  ///
  /// - Returns: the keyring (the primary key seals, every key opens) and
  ///   the revision.
  /// - Throws: `TaskVaultError.locked`, and the errors of `revision()` and
  ///   of reading the store.
  public func noteKeyringWithRevision() throws -> (keyring: Keyring, revision: VaultRevision) {
    let lock = try Files.lock(layout.lockFile, exclusive: false)
    defer { lock.release() }
    try checkDirectories()
    let (file, revision) = try readRevisedFile()
    // The synchronisable store only: the device-only file is not opened.
    let store = try VaultCodec.openSynchronisable(file, keys: try sessionKeys(file).keys, path: layout.vaultFile)
    return (try store.noteKeyring(path: layout.vaultFile), revision)
  }

  /// `vault.tkv` parsed (magic, version, structure and checksum checked),
  /// with its revision; the caller holds the lock.
  private func readRevisedFile() throws -> (file: VaultFile, revision: VaultRevision) {
    guard let bytes = try Files.readPrivate(layout.vaultFile, limit: VaultFile.maximumByteCount) else {
      throw TaskVaultError.notInitialised(path: layout.vaultFile)
    }
    let file = try VaultFile.parse(bytes, path: layout.vaultFile)
    return (file, VaultRevision(generation: file.generation, checksum: Array(bytes.suffix(SHA256.byteCount))))
  }
}
