import Foundation
import Glibc
import TaskCrypto

/// What the vault needs from the machine, injectable so tests can simulate
/// a reboot (a new boot id), the passing of time and faulty disks. The
/// production value reads the kernel's boot id, the real clock and
/// `/dev/shm`; no environment variable can change it.
struct VaultEnvironment: @unchecked Sendable {
  var fileSystem: any FileSystem
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
    bootID: { try readBootID(path: "/proc/sys/kernel/random/boot_id") },
    now: { Int64(time(nil)) },
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

/// Reads `/proc/sys/kernel/random/boot_id` (a UUID in text) as 16 bytes.
func readBootID(path: String) throws -> [UInt8] {
  let fd = try retrying(path, "open") { open(path, O_RDONLY | O_CLOEXEC) }
  defer { close(fd) }
  var text = [UInt8](repeating: 0, count: 64)
  let count = try text.withUnsafeMutableBytes { buffer in
    try retrying(path, "read") { read(fd, buffer.baseAddress, 64) }
  }
  let digits = text[..<count].filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: "\n") }
  guard let bytes = decodeHex(Array(digits)), bytes.count == 16 else {
    throw TaskVaultError.unlockUnavailable(reason: "cannot parse the kernel boot id in \(path)")
  }
  return bytes
}

/// `/dev/shm/taskkey-<uid>`, made 0700 if missing, refused unless
/// `/dev/shm` is a tmpfs and the directory is the user's own, private and
/// not a symlink.
func sharedMemoryRuntimeDirectory() throws -> String {
  let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
  let isTmpfs = mounts.split(separator: "\n").contains { line in
    let fields = line.split(separator: " ")
    return fields.count > 2 && fields[1] == "/dev/shm" && fields[2] == "tmpfs"
  }
  guard isTmpfs else {
    throw TaskVaultError.unlockUnavailable(reason: "/dev/shm is missing or not a tmpfs")
  }
  let path = "/dev/shm/taskkey-\(getuid())"
  if mkdir(path, 0o700) != 0 && errno != EEXIST {
    throw TaskVaultError.unlockUnavailable(reason: "cannot create \(path) (errno \(errno))")
  }
  var entry = stat()
  guard lstat(path, &entry) == 0, entry.st_mode & S_IFMT == S_IFDIR, entry.st_uid == getuid(),
    entry.st_mode & 0o077 == 0
  else {
    throw TaskVaultError.unlockUnavailable(reason: "\(path) is not a private directory owned by you")
  }
  return path
}

func encodeHex(_ bytes: [UInt8]) -> String {
  let digits = Array("0123456789abcdef".utf8)
  return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
}

func decodeHex(_ text: [UInt8]) -> [UInt8]? {
  guard text.count % 2 == 0 else { return nil }
  func value(_ c: UInt8) -> UInt8? {
    switch c {
    case 0x30...0x39: return c - 0x30
    case 0x61...0x66: return c - 0x57
    default: return nil
    }
  }
  var out = [UInt8]()
  for index in stride(from: 0, to: text.count, by: 2) {
    guard let high = value(text[index]), let low = value(text[index + 1]) else { return nil }
    out.append(high << 4 | low)
  }
  return out
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
    guard let file = try Files.openPrivate(path) else { return nil }
    defer { close(file.fd) }
    guard file.size == byteCount else { return nil }
    let buffer = try wrapCrypto { try SecureBytes(zeroedCount: byteCount) }
    var total = 0
    while total < byteCount {
      let count = try buffer.withUnsafeMutableBytes { out in
        try retrying(path, "read") { Glibc.read(file.fd, out.baseAddress! + total, byteCount - total) }
      }
      if count == 0 { return nil }
      total += count
    }
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
