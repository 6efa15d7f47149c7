import CommandKit
import FoundationEssentials
import TaskCrypto
import TaskSystem

/// `Vectors/key-file-v1.json`: key files, byte for byte and with their file
/// mode. Each case's bytes are written to a new file in a private temporary
/// directory with the case's mode and read back through the command's own
/// key-file reader (`VectorFileReaders.keyFile`: `taskkey seal|open
/// --key-file`'s `KeyFile.read`), so the mode rule is checked too. Nothing
/// else is written; the directory is removed.
enum KeyFileVectorChecker: VectorChecker {
  static let formats = ["key-file"]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    let file = try JSONDecoder().decode(KeyFileVectorFile.self, from: data)
    try VectorVerdict.withScratchDirectory("key-file") { directory in
      for vector in file.tests { report.record(check(vector, in: directory, reading: readers.keyFile)) }
    }
  }

  static func check(_ vector: KeyFileVector, in directory: URL, reading read: (String) throws -> NoteKey) -> String? {
    let name = "case \(vector.id) (\(vector.comment))"
    guard let content = VectorVerdict.hex(vector.content), let mode = Int(vector.mode, radix: 8) else {
      return "\(name): 'content' is not hex or 'mode' is not octal"
    }
    let path = directory.appendingPathComponent("case-\(vector.id).key").path
    guard FileManager.default.createFile(atPath: path, contents: Data(content), attributes: [.posixPermissions: mode])
    else { return "\(name): cannot write the case's file" }
    let outcome = Result { try read(path) }
    let code: (any Error) -> String? = { error in
      switch error {
      case let crypto as TaskCryptoError: return crypto.code
      case SystemError.loosePermissions: return "unsafe_permissions"
      default: return nil
      }
    }
    return VectorVerdict.verdict(
      name, result: vector.result, expectedError: vector.error, outcome: outcome, code: code
    ) { key in
      let bytes = key.key.withUnsafeBytes { Array($0) }
      return key.id.hex == vector.kid && VectorVerdict.hex(bytes) == vector.key ? nil : "read another kid or key"
    }
  }
}

/// `Vectors/key-file-v1.json`.
struct KeyFileVectorFile: Codable, Equatable {
  var format = "key-file"
  var version = 1
  var description: String
  var tests: [KeyFileVector]
}

/// One key-file case.
struct KeyFileVector: Codable, Equatable {
  var id: Int
  var comment: String
  /// The file's bytes, hex.
  var content: String
  /// The file's mode, octal digits (e.g. `600`).
  var mode: String
  /// `valid` or `invalid`.
  var result: String
  /// Valid: the key id, 8 hex digits.
  var kid: String?
  /// Valid: the key, 64 hex digits.
  var key: String?
  /// Invalid: `malformed_key_file` or `unsafe_permissions`.
  var error: String?
}
