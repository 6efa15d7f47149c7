import CommandKit
import TaskCrypto

/// Reads and writes key files: one line `<8 hex kid>:<64 hex key>`, mode
/// 0600, owned by the user. The key bytes go straight into locked memory.
enum KeyFile {
  /// Reads a key file, refusing it when it is not a regular file owned by
  /// the caller with no group or other permission bits.
  ///
  /// - Throws: `CLIError` for the file, `TaskCryptoError.malformedKeyFile`.
  static func read(path: String) throws -> NoteKey {
    // A valid file is 73 or 74 bytes; read one more to notice anything longer.
    let limit = NoteKey.keyFileLineByteCount + 1
    let bytes = try ProcessIO.readOwnerOnly(path, limit: limit, firstLine: false) {
      TaskCryptoError.malformedKeyFile(reason: "the file is longer than one key line")
    }
    return try bytes.withUnsafeBytes { try NoteKey.parseKeyFile($0) }
  }

  /// Creates a new key file (0600, never replacing a file) holding `key`.
  ///
  /// - Throws: `CLIError.fileExists`, `.cannotOpen`, `.io`.
  static func create(path: String, key: NoteKey) throws {
    let line = try key.keyFileBytes()
    try line.withUnsafeBytes { try ProcessIO.createNewFile(path, $0) }
  }
}
