import Foundation
import TaskCrypto
import TaskSystem

/// What the vault needs from the machine, injectable so tests can simulate
/// a reboot (a new boot id), the passing of time and faulty disks. The
/// production value reads the kernel's boot id, the real clock and
/// `/dev/shm`; no environment variable can change it.
struct VaultEnvironment: @unchecked Sendable {
  var fileSystem: any TaskSystem.FileSystem
  /// The 16 bytes of the current boot id.
  var bootID: () throws -> [UInt8]
  /// Seconds since 1970.
  var now: () -> Int64
  /// The directory, in memory that a reboot clears, for session keys.
  var runtimeDirectory: () throws -> String
  /// Fills a buffer with random bytes; a test seam for vectors only.
  var random: (UnsafeMutableRawBufferPointer) -> Void
  /// Seals with AES-256-GCM. Production always draws a fresh random nonce
  /// inside TaskCrypto; only the vector generator (which reaches TaskCrypto's
  /// internal nonce seam through `@testable`) replaces it.
  var sealer: @Sendable (UnsafeRawBufferPointer, SymmetricKey, [UInt8]) throws -> AES.GCM.SealedBox = {
    try AES.GCM.seal($0, using: $1, authenticating: $2)
  }

  func seal(_ plaintext: UnsafeRawBufferPointer, _ key: SymmetricKey, _ aad: [UInt8]) throws -> AES.GCM.SealedBox {
    try wrapCrypto { try sealer(plaintext, key, aad) }
  }

  static let production = VaultEnvironment(
    fileSystem: PosixFileSystem(),
    bootID: { try readBootID() },
    now: { Int64(Date().timeIntervalSince1970) },
    runtimeDirectory: { try sharedMemoryRuntimeDirectory() },
    random: { SecureRandom.fill($0) })

  func randomBytes(_ count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { random($0) }
    return bytes
  }

  func randomSecret(_ count: Int) throws -> SecureBytes {
    let bytes = try wrapCrypto { try SecureBytes(zeroedCount: count) }
    bytes.withUnsafeMutableBytes { random($0) }
    return bytes
  }

  func randomKey() throws -> SymmetricKey {
    try wrapCrypto { try SymmetricKey(bytes: try randomSecret(SymmetricKey.byteCount)) }
  }
}

/// Reads the kernel's boot id (a UUID in text) as 16 bytes.
func readBootID() throws -> [UInt8] {
  let text = try system { try RuntimeDirectory.bootIDText() }
  guard let bytes = Hex.decode(text.replacingOccurrences(of: "-", with: "")), bytes.count == 16 else {
    throw TaskVaultError.unlockUnavailable(reason: "cannot parse the kernel boot id in /proc/sys/kernel/random/boot_id")
  }
  return bytes
}

/// The in-memory runtime directory for session keys (TaskSystem's
/// `/dev/shm/taskkey-<uid>`); a refusal makes unlocking unavailable.
func sharedMemoryRuntimeDirectory() throws -> String {
  do {
    return try RuntimeDirectory.sharedMemory()
  } catch let error as SystemError {
    throw TaskVaultError.unlockUnavailable(reason: error.description)
  }
}

/// The session file `unlock.session` in the vault directory: the two store
/// master keys sealed under a session key that lives only in the tmpfs
/// runtime directory (SECURITY.md, "Unlocked state").
struct SessionFile {
  static let magic: [UInt8] = Array("TKUNLOCK".utf8)
  static let byteCount = 58 + 12 + 64 + 16
  static let aadByteCount = 58

  var vaultID: [UInt8]
  var bootID: [UInt8]
  var unlockedAt: Int64
  var notAfter: Int64  // 0 = until reboot or lock
  var sealed: AES.GCM.SealedBox

  static func aad(vaultID: [UInt8], bootID: [UInt8], unlockedAt: Int64, notAfter: Int64) -> [UInt8] {
    var writer = ByteWriter()
    writer.append(magic)
    writer.u16(1)
    writer.append(vaultID)
    writer.append(bootID)
    writer.u64(UInt64(bitPattern: unlockedAt))
    writer.u64(UInt64(bitPattern: notAfter))
    return writer.bytes
  }

  var aad: [UInt8] { Self.aad(vaultID: vaultID, bootID: bootID, unlockedAt: unlockedAt, notAfter: notAfter) }

  func encode() -> [UInt8] { aad + sealed.combined }

  static func parse(_ bytes: [UInt8]) -> SessionFile? {
    guard bytes.count == byteCount, Array(bytes[0..<8]) == magic, bytes[8] == 0, bytes[9] == 1 else { return nil }
    return bytes.withUnsafeBytes { buffer -> SessionFile? in
      var reader = ByteReader(buffer)
      guard (try? reader.take(10, "")) != nil, let vaultID = try? reader.bytes(16, ""),
        let bootID = try? reader.bytes(16, ""), let unlockedAt = try? reader.u64(""),
        let notAfter = try? reader.u64(""),
        let rest = try? reader.bytes(92, ""), let sealed = try? AES.GCM.SealedBox(combined: rest)
      else { return nil }
      return SessionFile(
        vaultID: vaultID, bootID: bootID, unlockedAt: Int64(bitPattern: unlockedAt),
        notAfter: Int64(bitPattern: notAfter), sealed: sealed)
    }
  }
}

/// The session key file `<runtime dir>/<vault id hex>.key`:
/// `"TKSESKEY" || boot id (16) || session key (32)`, 56 bytes, 0600.
enum SessionKeyFile {
  static let magic: [UInt8] = Array("TKSESKEY".utf8)
  static let byteCount = 56

  /// Reads the key if the file exists, is private and names `bootID`.
  static func read(path: String, bootID: [UInt8]) throws -> SymmetricKey? {
    guard let file = try system({ try OpenFile.ownerOnly(path) }), file.size == byteCount else { return nil }
    let buffer = try wrapCrypto { try SecureBytes(zeroedCount: byteCount) }
    let total = try system { try buffer.withUnsafeMutableBytes { try file.read(into: $0) } }
    guard total == byteCount else { return nil }
    return try buffer.withUnsafeBytes { bytes -> SymmetricKey? in
      guard Array(bytes[0..<8]) == magic, Array(bytes[8..<24]) == bootID else { return nil }
      return try wrapCrypto { try SymmetricKey(copying: UnsafeRawBufferPointer(rebasing: bytes[24..<56])) }
    }
  }

  /// The file's bytes in locked memory.
  static func encode(bootID: [UInt8], key: SymmetricKey) throws -> SecureBytes {
    let bytes = try wrapCrypto { try SecureBytes(zeroedCount: byteCount) }
    bytes.withUnsafeMutableBytes { out in
      for (index, byte) in (magic + bootID).enumerated() { out[index] = byte }
      key.withUnsafeBytes { out.baseAddress!.advanced(by: 24).copyMemory(from: $0.baseAddress!, byteCount: 32) }
    }
    return bytes
  }
}
