import FoundationEssentials
import TaskCrypto

/// Which primary note key a sync import leaves (docs/formats/sync-bundle.md,
/// "Import").
public enum SyncPrimaryChoice: Sendable, Equatable {
  /// `taskkey sync import` without an option: adopt the bundle's primary
  /// when this vault did not hold that key before the import (the other
  /// device rotated) and neither side retired it; otherwise keep this
  /// vault's.
  case automatic
  /// `--adopt-primary`: always adopt the bundle's primary; refused with
  /// `retiredKey` when either side retired it.
  case adopt
  /// `--keep-primary`: never adopt; this vault's primary stays.
  case keep
}

/// What `importSyncBundle` changed.
public struct SyncImportReport: Sendable, Equatable {
  /// Note keys the bundle brought that this vault lacked, in bundle order.
  public var addedKeyIDs: [KeyID] = []
  /// Note keys both held with the same bytes.
  public var unchangedKeyIDs: [KeyID] = []
  /// The primary before the import.
  public var previousPrimaryID: KeyID
  /// The primary after the import; differs only when asked to adopt the
  /// bundle's primary.
  public var primaryID: KeyID
  /// Items the bundle brought that this vault lacked.
  public var addedItems: [String] = []
  /// Items replaced because the bundle's copy was modified later.
  public var updatedItems: [String] = []
  /// Items kept as they were (same or newer here).
  public var keptItems: [String] = []
  /// Bundle items not imported because a device-only item here has the name.
  public var skippedItems: [String] = []
  /// Keys this vault held that the bundle says were retired elsewhere:
  /// retired here too.
  public var retiredKeyIDs: [KeyID] = []
  /// Keys the bundle holds that were retired here or in the bundle: never
  /// added back.
  public var refusedRetiredKeyIDs: [KeyID] = []
}

/// The sync bundle, format version 1 (SECURITY.md, "Sync bundle").
struct SyncBundle {
  static let header = FormatHeader.syncBundle
  static let headerByteCount = 96
  static let minimumByteCount = headerByteCount + VaultFile.minimumStoreSealedByteCount + 32
  static let maximumByteCount = headerByteCount + VaultFile.maximumStoreSealedByteCount + 32

  var vaultID: [UInt8]
  var preset: KDFPreset
  var kdf: PasswordKDF.Parameters
  var salt: [UInt8]
  var created: Int64
  var check: [UInt8]
  var sealed: AES.GCM.SealedBox

  func header(length: Int) -> [UInt8] {
    var writer = ByteWriter()
    writer.append(Self.header.bytes)
    writer.append(vaultID)
    writer.u8(1)
    writer.u8(preset.rawValue)
    writer.u32(kdf.opsLimit)
    writer.u32(kdf.memoryKiB)
    writer.append(salt)
    writer.u64(UInt64(bitPattern: created))
    writer.append(check)
    writer.u32(UInt32(length))
    return writer.bytes
  }

  func encode() -> [UInt8] {
    let combined = sealed.combined
    let body = header(length: combined.count) + combined
    return body + SHA256.hash(data: body).bytes
  }

  static func parse(_ bytes: [UInt8], path: String) throws -> SyncBundle {
    try header.check(bytes, path: path)
    let body = try VaultFile.checkedBody(bytes, path: path, minimum: minimumByteCount, maximum: maximumByteCount)
    do {
      return try body.withUnsafeBytes { buffer in
        var reader = ByteReader(buffer)
        let (vaultID, preset, kdf, salt, created) = try VaultFile.readKDFHeader(&reader)
        let check = try reader.bytes(32, "passphrase check")
        let length = Int(try reader.u32("length"))
        try VaultFile.checkSealedLength(length, what: "bundle payload")
        guard length == reader.remaining else { throw ParseFailure("payload length does not match the file") }
        let sealed = try AES.GCM.SealedBox(combined: try reader.bytes(length, "payload"))
        return SyncBundle(
          vaultID: vaultID, preset: preset, kdf: kdf, salt: salt, created: created, check: check, sealed: sealed)
      }
    } catch let failure as ParseFailure {
      throw TaskVaultError.damaged(path: path, reason: failure.reason)
    }
  }

  /// How errors name a bundle, which has no path of its own here.
  static let displayName = "sync bundle"

  /// Parses, authenticates and decodes a bundle.
  static func open(_ bytes: [UInt8], passphrase: SecureBytes) throws -> (bundle: SyncBundle, contents: StoreContents) {
    let parsed = try parse(bytes, path: displayName)
    try hardenProcess()
    let derived = try keys(passphrase: passphrase, salt: parsed.salt, kdf: parsed.kdf)
    guard ConstantTime.equals(derived.check, parsed.check) else { throw TaskVaultError.wrongPassphrase }
    let plaintext: SecureBytes
    do {
      plaintext = try AES.GCM.openSecret(
        parsed.sealed, using: derived.key, authenticating: parsed.header(length: parsed.sealed.combined.count))
    } catch {
      throw TaskVaultError.tampered(path: displayName, part: "payload")
    }
    do {
      return (parsed, try StoreContents.decode(plaintext, store: .synchronisable))
    } catch let failure as ParseFailure {
      throw TaskVaultError.damaged(path: displayName, reason: failure.reason)
    }
  }

  /// Argon2id output of 64 bytes: the first 32 are the payload key, the
  /// SHA-256 of the last 32 is the stored passphrase check.
  static func keys(passphrase: SecureBytes, salt: [UInt8], kdf: PasswordKDF.Parameters) throws
    -> (key: SymmetricKey, check: [UInt8])
  {
    let output = try wrapCrypto {
      try PasswordKDF.deriveBytes(
        from: PassphraseBytes.kdfInput(passphrase), salt: salt, parameters: kdf, byteCount: 64)
    }
    return try output.withUnsafeBytes { raw in
      let key = try wrapCrypto { try SymmetricKey(copying: UnsafeRawBufferPointer(rebasing: raw[0..<32])) }
      return (key, SHA256.hash(data: UnsafeRawBufferPointer(rebasing: raw[32..<64])).bytes)
    }
  }
}

extension Vault {
  /// Exports the synchronisable store (the note keyring and items of class
  /// `.afterFirstUnlock`) as a sync bundle sealed under a key derived from
  /// the vault's passphrase with a fresh salt. The device-only store is not
  /// read into the bundle at all.
  ///
  /// - Parameter passphrase: the vault's passphrase, checked against the
  ///   vault before the bundle is made.
  /// - Returns: the bundle bytes, safe to hand to any file-sync tool.
  /// - Throws: `TaskVaultError.wrongPassphrase` and the errors of reading.
  public func exportSyncBundle(passphrase: SecureBytes) throws -> [UInt8] {
    try VaultCodec.checkPassphrase(passphrase)
    let lock = try Files.lock(layout.lockFile, exclusive: false)
    defer { lock.release() }
    let file = try readFile()
    let keys = try VaultCodec.unwrap(file, passphrase: passphrase)
    // The device-only file is not even read: only the synchronisable store is opened.
    let store = try VaultCodec.openSynchronisable(file, keys: keys, path: layout.vaultFile)
    let salt = environment.randomBytes(PasswordKDF.saltByteCount)
    let derived = try SyncBundle.keys(passphrase: passphrase, salt: salt, kdf: file.kdf)
    var bundle = SyncBundle(
      vaultID: file.vaultID, preset: file.preset, kdf: file.kdf, salt: salt, created: environment.now(),
      check: derived.check, sealed: try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: 28)))
    let plaintext = try store.encode()
    let aad = bundle.header(length: plaintext.count + 28)
    bundle.sealed = try plaintext.withUnsafeBytes { raw in
      try environment.seal(raw, derived.key, aad)
    }
    return bundle.encode()
  }

  /// Merges a sync bundle into the synchronisable store.
  ///
  /// Keys merge by key id: retirements win (a key either side retired is
  /// removed here and never added back; both lists are kept), a key the
  /// vault lacks is added, a key it holds with the same bytes is unchanged,
  /// and no other key is removed. The primary follows `primary`
  /// (docs/formats/sync-bundle.md, "Import"). Items merge by name: the
  /// later `modified` wins; a name held by a device-only item is skipped.
  ///
  /// - Parameters:
  ///   - bundle: the bundle bytes.
  ///   - passphrase: the passphrase the bundle was exported under.
  ///   - primary: which primary key the merge leaves; `taskkey sync
  ///     import` without an option is `.automatic`.
  /// - Returns: what changed.
  /// - Throws: `TaskVaultError.wrongPassphrase`, `.damaged`, `.tampered`,
  ///   `.unsupportedVersion` for the bundle; `.retiredKey` when the bundle
  ///   retires this vault's primary (after any adoption) or `.adopt`
  ///   names a retired key;
  ///   `.keyConflict` when a key id
  ///   is held with other bytes (nothing is written); `.locked`.
  public func importSyncBundle(_ bundle: [UInt8], passphrase: SecureBytes, primary: SyncPrimaryChoice = .automatic)
    throws -> SyncImportReport
  {
    try VaultCodec.checkPassphrase(passphrase)
    let incoming = try SyncBundle.open(bundle, passphrase: passphrase).contents
    guard let incomingKeyring = incoming.keyring else {
      throw TaskVaultError.damaged(path: SyncBundle.displayName, reason: "no keyring")
    }
    var report: SyncImportReport?
    try modify { stores in
      report = try SyncMerge.merge(
        incoming, keyring: incomingKeyring, into: &stores, primary: primary, path: layout.vaultFile)
    }
    return report!
  }
}
