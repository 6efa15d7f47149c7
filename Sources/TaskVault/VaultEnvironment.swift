import FoundationEssentials
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

  /// Replaces the file at `path` with `bytes` through TaskSystem's one
  /// durable replace (temporary `<path>.tmp`, fsync, rename, directory
  /// fsync) over this environment's file-system seam.
  func replaceFile(_ path: String, with bytes: UnsafeRawBufferPointer) throws {
    let fileSystem = self.fileSystem
    try system { try fileSystem.replace(path, contents: bytes) }
  }
}

/// Reads the kernel's boot id (a UUID in text) as 16 bytes.
func readBootID() throws -> [UInt8] {
  let text = try system { try RuntimeDirectory.bootIDText() }
  // Not Foundation's replacingOccurrences: its first use costs a short
  // process (every `taskkey` command reads the boot id) a few hundred µs.
  guard let bytes = Hex.decode(text.filter { $0 != "-" }), bytes.count == 16 else {
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
