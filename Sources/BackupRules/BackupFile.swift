import Foundation
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
  static let magic: [UInt8] = Array("TKBACKUP".utf8)
  static let version: UInt16 = 1
  static let headerByteCount = 46
  static let tagByteCount = 32
  /// The smallest and largest `vault.tkv` (SECURITY.md, "Vault file").
  static let minimumVaultByteCount = 706
  static let maximumVaultByteCount = 129 + 5 + 28 + (8 << 20) + 32
  static let minimumByteCount = headerByteCount + minimumVaultByteCount + tagByteCount
  static let maximumByteCount = headerByteCount + maximumVaultByteCount + tagByteCount

  static func encode(_ snapshot: VaultFileSnapshot, created: Int64) -> [UInt8] {
    var bytes = magic
    bytes += bigEndian(UInt64(version), 2)
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
  static func open(_ bytes: [UInt8], passphrase: SecureBytes, path: String) throws -> Opened {
    guard bytes.count >= 10, Array(bytes[0..<8]) == magic else {
      throw BackupError.damaged(path: path, reason: "not a TaskKey backup (bad magic)")
    }
    let version = Int(bytes[8]) << 8 | Int(bytes[9])
    guard version == Int(Self.version) else { throw BackupError.unsupportedVersion(path: path, version: version) }
    guard bytes.count >= minimumByteCount, bytes.count <= maximumByteCount else {
      throw BackupError.damaged(
        path: path, reason: "\(bytes.count) bytes is outside \(minimumByteCount)...\(maximumByteCount)")
    }
    let length = Int(integer(bytes[42..<46]))
    guard length == bytes.count - headerByteCount - tagByteCount else {
      throw BackupError.damaged(path: path, reason: "the vault file length \(length) does not match the file size")
    }
    let vaultFile = Array(bytes[headerByteCount..<(headerByteCount + length)])
    // The header must repeat the vault file's own id and generation.
    guard vaultFile.count >= 129, vaultFile[10..<26] == bytes[10..<26], vaultFile[121..<129] == bytes[26..<34] else {
      throw BackupError.damaged(path: path, reason: "the header's vault id or generation differs from the vault file's")
    }
    let snapshot: VaultFileSnapshot
    do {
      snapshot = try Vault.openSnapshot(vaultFile, passphrase: passphrase, label: path + " (vault file)")
    } catch let error as TaskVaultError {
      switch error {
      case .wrongPassphrase: throw BackupError.wrongPassphrase
      case .damaged(_, let reason): throw BackupError.damaged(path: path, reason: "the vault file inside: \(reason)")
      case .tampered(_, let part): throw BackupError.tampered(path: path, part: part)
      case .unsupportedVersion(_, let version): throw BackupError.unsupportedVersion(path: path, version: version)
      default: throw BackupError.vault(error)
      }
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
