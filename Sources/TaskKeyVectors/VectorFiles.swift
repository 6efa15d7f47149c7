import CommandKit

/// The JSON schemas of the files in `Vectors/`, shared by the generator
/// (a test) and the checker (`taskkey vectors check`). Vectors/README.md
/// documents each field.

/// The first fields of every vector file: which format it tests. TaskKey's
/// own files carry `format` and `version`; Wycheproof files carry
/// `algorithm` and `schema` instead.
struct VectorFileHeader: Codable {
  /// The format name, e.g. `sealed-value` or `aes-256-gcm`.
  var format: String?
  /// The format version the file tests.
  var version: Int?
  /// Wycheproof: the algorithm, e.g. `AES-GCM`.
  var algorithm: String?
  /// Wycheproof: the schema file name, e.g. `aead_test_schema_v1.json`.
  var schema: String?
}

/// `Vectors/aes-256-gcm.json`: known answers for AES-256-GCM.
struct AESGCMVectorFile: Codable, Equatable {
  var format = "aes-256-gcm"
  var version = 1
  var description: String
  var source: String
  var tests: [AESGCMVector]
}

/// One AES-256-GCM case; hex strings throughout.
struct AESGCMVector: Codable, Equatable {
  var id: Int
  var comment: String
  var key: String
  var nonce: String
  var aad: String
  var plaintext: String
  var ciphertext: String
  var tag: String
  /// `valid` or `invalid`.
  var result: String
  /// For invalid cases: the error `open` must give.
  var error: String?
}

/// `Vectors/sealed-value-v1.json`: the sealed-value text format.
struct SealedValueVectorFile: Codable, Equatable {
  var format = "sealed-value"
  var version = 1
  var description: String
  /// The keyring every case is opened with.
  var keys: [VectorKey]
  var tests: [SealedValueVector]
}

/// A key in a vector keyring.
struct VectorKey: Codable, Equatable {
  /// 8 lowercase hex digits.
  var kid: String
  /// 64 lowercase hex digits.
  var key: String
}

/// One sealed-value case.
struct SealedValueVector: Codable, Equatable {
  var id: Int
  var comment: String
  /// The caller's context, UTF-8.
  var context: String
  /// The text handed to `open`.
  var value: String
  /// `valid` (opens to `plaintext`), `plain` (no marker: returned
  /// unchanged), or `invalid` (must fail with `error`).
  var result: String
  /// `bytes` or `text` (the plaintext must also be valid UTF-8).
  var openAs: String
  /// Hex of the expected plaintext for valid cases.
  var plaintext: String?
  /// Hex of the nonce, for valid cases (so sealing can be reproduced).
  var nonce: String?
  /// The error code for invalid cases.
  var error: String?

  enum CodingKeys: String, CodingKey {
    case id, comment, context, value, result
    case openAs = "open_as"
    case plaintext, nonce, error
  }
}

/// `Vectors/argon2id.json`: the passphrase KDF.
struct Argon2idVectorFile: Codable, Equatable {
  var format = "argon2id"
  var version = 1
  var description: String
  var tests: [Argon2idVector]
}

/// One Argon2id (version 1.3, 0x13) case; byte strings in hex.
struct Argon2idVector: Codable, Equatable {
  var id: Int
  var comment: String
  var password: String
  var salt: String
  /// Argon2's secret value K (RFC 9106); empty for everything TaskKey derives.
  var secret: String
  /// Argon2's associated data X; empty for everything TaskKey derives.
  var ad: String
  /// Passes.
  var t: UInt32
  /// Memory in KiB.
  var m: UInt32
  /// Lanes (parallelism); TaskKey (libsodium) uses 1.
  var p: Int
  /// Output length in bytes.
  var length: Int
  /// `valid` (derives `tag`) or `invalid` (refused with `error`).
  var result: String
  var tag: String?
  var error: String?
}
