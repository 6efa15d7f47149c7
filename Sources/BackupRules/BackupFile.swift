import FoundationEssentials
import TaskCrypto
import TaskVault

/// The backup file, format version 1 (SECURITY.md, "Backup file"):
///
///     "TKBACKUP" || version (2) || vault id (16) || generation (8)
///     || created (8, i64) || L (4) || vault.tkv (L) || tag (32)
///
/// tag = HMAC-SHA256(BK, every byte before it), BK derived from the
/// synchronisable master key (`VaultFileSnapshot.backupAuthenticationKey`).
enum BackupFile {
  static let header = FormatHeader(magic: "TKBACKUP", version: 1, name: "backup")
  static let headerByteCount = 46
  static let tagByteCount = 32
  /// How errors name the vault file inside a backup: `<backup path> (vault file)`.
  static let vaultFileLabelSuffix = " (vault file)"
  /// The smallest and largest `vault.tkv`, as TaskVault reads it.
  static let vaultByteCounts = VaultFileReader.vaultFileByteCounts
  static let minimumByteCount = headerByteCount + vaultByteCounts.lowerBound + tagByteCount
  static let maximumByteCount = headerByteCount + vaultByteCounts.upperBound + tagByteCount

  static func encode(_ snapshot: VaultFileSnapshot, created: Int64) -> [UInt8] {
    var bytes = header.bytes
    bytes += snapshot.vaultID
    bytes += bigEndian(snapshot.generation, 8)
    bytes += bigEndian(UInt64(bitPattern: created), 8)
    bytes += bigEndian(UInt64(snapshot.bytes.count), 4)
    bytes += snapshot.bytes
    bytes += HMACSHA256.authenticationCode(for: bytes, using: snapshot.backupAuthenticationKey)
    return bytes
  }

  /// What a checked backup holds.
  struct Opened {
    let snapshot: VaultFileSnapshot
    let created: Int64
  }

  /// Checks everything in the order of SECURITY.md's MUST rules, then
  /// opens the vault file inside with the passphrase and checks the tag.
  /// A failure of the vault file inside is `BackupError.vault`.
  static func open(_ bytes: [UInt8], passphrase: SecureBytes, path: String) throws -> Opened {
    switch header.mismatch(in: bytes) {
    case nil: break
    case .notThisFormat(let reason): throw BackupError.damaged(path: path, reason: reason)
    case .unsupportedVersion(let version): throw BackupError.unsupportedVersion(path: path, version: version)
    }
    guard bytes.count >= minimumByteCount, bytes.count <= maximumByteCount else {
      throw BackupError.damaged(
        path: path, reason: "\(bytes.count) bytes is outside \(minimumByteCount)...\(maximumByteCount)")
    }
    let length = Int(integer(bytes[42..<46]))
    guard length == bytes.count - headerByteCount - tagByteCount else {
      throw BackupError.damaged(path: path, reason: "the vault file length \(length) does not match the file size")
    }
    let vaultFile = Array(bytes[headerByteCount..<(headerByteCount + length)])
    let label = path + vaultFileLabelSuffix
    let snapshot: VaultFileSnapshot
    do {
      // The header must repeat the vault file's own id and generation.
      let inner = try VaultFileReader.header(ofVaultFile: vaultFile, label: label)
      guard inner.vaultID == Array(bytes[10..<26]), inner.generation == integer(bytes[26..<34]) else {
        throw BackupError.damaged(
          path: path, reason: "the header's vault id or generation differs from the vault file's")
      }
      snapshot = try Vault.openSnapshot(vaultFile, passphrase: passphrase, label: label)
    } catch let error as TaskVaultError {
      // The vault file inside keeps its own cause (wrong passphrase,
      // damaged, altered, unsupported version), named "<path> (vault file)".
      throw BackupError.vault(error)
    }
    let body = Array(bytes[..<(bytes.count - tagByteCount)])
    let tag = Array(bytes[(bytes.count - tagByteCount)...])
    guard HMACSHA256.isValidAuthenticationCode(tag, authenticating: body, using: snapshot.backupAuthenticationKey)
    else { throw BackupError.tampered(path: path, part: "backup tag") }
    return Opened(snapshot: snapshot, created: Int64(bitPattern: integer(bytes[34..<42])))
  }

  static func bigEndian(_ value: UInt64, _ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (count - 1 - $0))) }
  }

  static func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }
}
