import CommandKit
import FoundationEssentials
import TaskCrypto
import TaskVault

/// `Vectors/passphrase-bytes-v1.json`: how a passphrase file becomes the
/// bytes the KDF reads (docs/formats/vault-file.md, "Passphrase bytes").
/// Each case's bytes are written to a new 0600 file in a private temporary
/// directory and read by the command's own reader
/// (`VectorFileReaders.passphraseFile`: `--passphrase-file`'s
/// `PassphraseSource.read`), then put through `PassphraseBytes.kdfInput`,
/// the step the vault, bundle and backup readers take before Argon2id.
enum PassphraseVectorChecker: VectorChecker {
  static let formats = ["passphrase-bytes"]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    let file = try JSONDecoder().decode(PassphraseVectorFile.self, from: data)
    try VectorVerdict.withScratchDirectory("passphrase") { directory in
      for vector in file.tests { report.record(check(vector, in: directory, reading: readers.passphraseFile)) }
    }
  }

  static func check(
    _ vector: PassphraseVector, in directory: URL, reading read: (String) throws -> SecureBytes
  ) -> String? {
    let name = "case \(vector.id) (\(vector.comment))"
    guard let input = VectorVerdict.hex(vector.input) else { return "\(name): 'input' is not hex" }
    let path = directory.appendingPathComponent("case-\(vector.id)").path
    guard FileManager.default.createFile(atPath: path, contents: Data(input), attributes: [.posixPermissions: 0o600])
    else { return "\(name): cannot write the case's file" }
    let outcome = Result {
      try PassphraseBytes.kdfInput(try read(path))
    }
    let code: (any Error) -> String? = { error in
      switch error {
      case TaskVaultError.emptyPassphrase: return "empty_passphrase"
      case TaskVaultError.passphraseTooLong: return "passphrase_too_long"
      default: return nil
      }
    }
    return VectorVerdict.verdict(
      name, result: vector.result, expectedError: vector.error, outcome: outcome, code: code
    ) { bytes in
      bytes.withUnsafeBytes { VectorVerdict.hex(Array($0)) } == vector.kdfInput ? nil : "gave other bytes"
    }
  }
}

/// `Vectors/passphrase-bytes-v1.json`.
struct PassphraseVectorFile: Codable, Equatable {
  var format = "passphrase-bytes"
  var version = 1
  var description: String
  var tests: [PassphraseVector]
}

/// One passphrase case.
struct PassphraseVector: Codable, Equatable {
  var id: Int
  var comment: String
  /// The passphrase file's bytes, hex.
  var input: String
  /// `valid` or `invalid`.
  var result: String
  /// Valid: the bytes Argon2id reads, hex.
  var kdfInput: String?
  /// Invalid: `empty_passphrase` or `passphrase_too_long`.
  var error: String?

  enum CodingKeys: String, CodingKey {
    case id, comment, input, result, error
    case kdfInput = "kdf_input"
  }
}
