import TaskCrypto
import TaskSystem

/// Reads and writes key files: one line `<8 hex kid>:<64 hex key>`, mode
/// 0600, owned by the user. The key bytes go straight into locked memory.
enum KeyFile {
  /// Reads a key file, refusing it when it is not a regular file owned by
  /// the caller with no group or other permission bits.
  static func read(path: String) throws -> NoteKey {
    let file = try openOwnerOnlyFile(path)
    // A valid file is 73 or 74 bytes; read one more to notice anything longer.
    let buffer = try SecureBytes(zeroedCount: NoteKey.keyFileLineByteCount + 2)
    let length = try systemCall { try buffer.withUnsafeMutableBytes { try file.read(into: $0) } }
    do {
      return try buffer.withUnsafeBytes { try NoteKey.parseKeyFile(UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
    } catch let error as TaskCryptoError {
      throw CLIError.crypto(error)
    }
  }

  /// Creates a new key file with `O_CREAT | O_EXCL | O_NOFOLLOW` and mode
  /// 0600, writes the key, and syncs the file and its directory. Refuses to
  /// replace an existing file.
  static func create(path: String, key: NoteKey) throws {
    let line: SecureBytes
    do { line = try key.keyFileBytes() } catch let error as TaskCryptoError { throw CLIError.crypto(error) }
    try line.withUnsafeBytes { try createNewFile(path, contents: $0) }
  }
}

/// Opens a file that holds a secret (a key file, a passphrase file) for
/// reading, refusing it unless it is a regular file, not a symbolic link,
/// owned by the caller, with no group or other permission bits. The checks
/// run on the opened descriptor, so the file cannot be swapped in between.
///
/// - Returns: the open file (closed when released).
func openOwnerOnlyFile(_ path: String) throws -> OpenFile {
  guard let file = try systemCall({ try OpenFile.ownerOnly(path) }) else {
    throw CLIError(SystemError.notFound(path))
  }
  return file
}
