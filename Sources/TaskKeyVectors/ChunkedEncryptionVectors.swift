import FoundationEssentials
import TaskCrypto

/// Checks Wycheproof files of the `c2sp_chunked_encryption_schema`
/// (Cobblestone test vectors) against this build, for `taskkey vectors
/// check`, honouring the flags as the schema's documentation defines them.
///
/// Every supported vector is run through five paths: the streaming
/// `Opener` (fed in uneven pieces), the `ChunkedEncryption.RandomAccessOpener` (length
/// authentication, then the whole message), and both again in raw mode
/// (the 56-byte header removed, `aeadKey` and `baseNonce` given directly)
/// where the vector allows it; a valid vector is also re-sealed, in raw mode
/// and with its salt injected, and must give `ct` byte for byte. An invalid
/// vector must fail with an error of the class its flags name.
public enum ChunkedEncryptionVectors {
  /// The outcome of checking one file.
  public struct Report: Equatable, Sendable {
    /// How many vectors ran.
    public var cases = 0
    /// One line per vector that misbehaved; empty when the file passed.
    public var failures: [String] = []
    /// One entry per group skipped (an AEAD other than AES-256-GCM).
    public var skipped: [Skip] = []
  }

  /// A group of vectors not run, and how many vectors it holds.
  public struct Skip: Equatable, Sendable {
    /// Names the group and why it was skipped.
    public var description: String
    /// How many vectors the group holds.
    public var count: Int
  }

  /// The schema name these files carry.
  public static let schema = "c2sp_chunked_encryption_schema.json"

  /// Checks one vector file.
  ///
  /// - Parameter data: the file's bytes (JSON).
  /// - Returns: the report, or nil when the file is not of this schema, so
  ///   that a caller can try another checker.
  public static func check(_ data: Data) -> Report? {
    guard let file = try? JSONDecoder().decode(VectorFile.self, from: data), file.schema == schema else { return nil }
    var report = Report()
    for group in file.testGroups {
      guard group.aead == ChunkedEncryption.aeadName, group.sha == "SHA-512" else {
        report.skipped.append(
          Skip(
            description: "group \(group.aead) with \(group.sha): TaskKey is Cobblestone-256", count: group.tests.count))
        continue
      }
      for vector in group.tests {
        report.cases += 1
        if let failure = check(vector) { report.failures.append("tcId \(vector.tcId) (\(vector.comment)): \(failure)") }
      }
    }
    return report
  }

  struct VectorFile: Decodable {
    var schema: String
    var testGroups: [Group]
  }

  struct Group: Decodable {
    var aead: String
    var sha: String
    var tests: [Vector]
  }

  struct Vector: Decodable {
    var tcId: Int
    var comment: String
    var key: String
    var ctx: String
    var ct: String
    var aeadKey: String?
    var baseNonce: String?
    var msgLength: Int?
    var msgSha512: String?
    var result: String
    var flags: [String]
  }

  /// What one path produced: the plaintext it released, and its error.
  struct Outcome {
    var released: [UInt8] = []
    var error: Error?
  }

  /// The error codes an invalid vector may end with, from its flags.
  static func allowedCodes(_ flags: [String]) -> Set<String> {
    if flags.contains("InvalidKeySize") { return ["invalid_key_size"] }
    if flags.contains("HeaderFailure") {
      return flags.contains("Truncation") ? ["truncated_header"] : ["commitment_mismatch"]
    }
    var codes = Set<String>()
    if flags.contains("Truncation") {
      codes.formUnion(["missing_final_chunk", "truncated_chunk", "final_chunk_authentication_failed"])
    }
    if flags.contains("TrailingData") {
      // Garbage right after a full chunk sits where the final chunk belongs:
      // a reader cannot tell it from a cut or altered final chunk.
      codes.formUnion(["trailing_data", "final_chunk_authentication_failed", "truncated_chunk"])
    }
    if flags.contains("ChunkReordering") { codes.insert("chunk_out_of_place") }
    if flags.contains("ModifiedCiphertext") {
      codes.formUnion(["chunk_authentication_failed", "final_chunk_authentication_failed"])
    }
    return codes
  }

  static func check(_ vector: Vector) -> String? {
    guard let keyBytes = hex(vector.key), let context = hex(vector.ctx), let compressed = hex(vector.ct) else {
      return "a field is not hex"
    }
    let sealed: [UInt8]
    do { sealed = try ZlibStream.decompress(compressed) } catch { return "ct does not decompress: \(error)" }
    let key: SymmetricKey
    do {
      key = try keyBytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
    } catch {
      let code = (error as? TaskCryptoError)?.code ?? "\(error)"
      return vector.flags.contains("InvalidKeySize") && code == "invalid_key_size"
        ? nil : "the key was refused (\(code))"
    }
    var paths: [(String, Outcome)] = [
      ("stream", stream({ try ChunkedEncryption.Opener(key: key, context: context) }, sealed)),
      (
        "random access",
        randomAccess(vector, sealed) {
          try ChunkedEncryption.RandomAccessOpener(key: key, context: context, sealedByteCount: $0, reader: $1)
        }
      ),
    ]
    if !vector.flags.contains("HeaderFailure"), let rawBytes = vector.aeadKey.flatMap(hex),
      let nonce = vector.baseNonce.flatMap(hex), sealed.count >= ChunkedEncryption.headerByteCount
    {
      do {
        let raw = try rawBytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
        let body = Array(sealed[ChunkedEncryption.headerByteCount...])
        paths.append(("raw stream", stream({ try ChunkedEncryption.Opener(rawKey: raw, baseNonce: nonce) }, body)))
        paths.append(
          (
            "raw random access",
            randomAccess(vector, body) {
              try ChunkedEncryption.RandomAccessOpener(rawKey: raw, baseNonce: nonce, sealedByteCount: $0, reader: $1)
            }
          ))
        if vector.result == "valid", let message = paths[0].1.error == nil ? paths[0].1.released : nil {
          if try reseal(message, with: ChunkedEncryption.Sealer(rawKey: raw, baseNonce: nonce)) != body {
            return "raw-mode sealing gives other bytes"
          }
          let salt = Array(sealed[..<ChunkedEncryption.saltByteCount])
          if try reseal(message, with: ChunkedEncryption.Sealer(key: key, context: context, salt: salt)) != sealed {
            return "sealing with the vector's salt gives other bytes"
          }
        }
      } catch {
        return "raw mode failed to start: \(error)"
      }
    }
    for (name, outcome) in paths {
      if let failure = judge(vector, outcome, path: name) { return "\(name): \(failure)" }
    }
    return nil
  }

  static func judge(_ vector: Vector, _ outcome: Outcome, path: String) -> String? {
    let expectedDigest = vector.msgSha512.flatMap(hex)
    if vector.result == "valid" {
      if let error = outcome.error { return "expected success, got \(code(error))" }
      guard outcome.released.count == vector.msgLength, sha512(outcome.released) == expectedDigest else {
        return "opened to other bytes (\(outcome.released.count) bytes)"
      }
      return nil
    }
    guard let error = outcome.error else { return "expected failure, but it opened" }
    let allowed = allowedCodes(vector.flags)
    guard allowed.contains(code(error)) else { return "expected one of \(allowed.sorted()), got \(code(error))" }
    // A streaming reader may release the valid prefix, never more.
    let prefix = vector.flags.contains("PartialPlaintext") ? (vector.msgLength ?? 0) : 0
    if outcome.released.count > prefix { return "released \(outcome.released.count) bytes, more than \(prefix)" }
    if outcome.released.count == prefix && prefix > 0 && sha512(outcome.released) != expectedDigest {
      return "released a prefix that is not the valid one"
    }
    return nil
  }

  /// Feeds `sealed` in uneven pieces, then checks that the error sticks.
  static func stream(_ make: () throws -> ChunkedEncryption.Opener, _ sealed: [UInt8]) -> Outcome {
    var outcome = Outcome()
    do {
      let opener = try make()
      let collect: (UnsafeRawBufferPointer) -> Void = { outcome.released += $0 }
      do {
        var offset = 0
        var piece = 1
        while offset < sealed.count {
          let end = Swift.min(offset + piece, sealed.count)
          try opener.update(sealed[offset..<end], emit: collect)
          offset = end
          piece = piece * 3 + 7
        }
        try opener.finish(emit: collect)
      } catch {
        outcome.error = error
        // Reads after a failure must keep failing, not end cleanly.
        let again = Result { try opener.finish(emit: collect) }
        if case .success = again { outcome.error = VectorCheckError.cleanEndAfterFailure }
      }
    } catch {
      outcome.error = error
    }
    return outcome
  }

  /// Authenticates the length, then reads the whole message. A vector
  /// without `ValidFinalChunk` must already fail at the length check.
  static func randomAccess(
    _ vector: Vector, _ sealed: [UInt8],
    _ make: (UInt64, @escaping ChunkedEncryption.RandomAccessOpener.Reader) throws ->
      ChunkedEncryption.RandomAccessOpener
  ) -> Outcome {
    var outcome = Outcome()
    let reader: ChunkedEncryption.RandomAccessOpener.Reader = { offset, buffer in
      let start = Int(offset)
      guard start + buffer.count <= sealed.count else { throw TaskCryptoError.truncatedHeader(byteCount: sealed.count) }
      sealed[start..<(start + buffer.count)].withUnsafeBytes { buffer.copyMemory(from: $0) }
    }
    do {
      let opener = try make(UInt64(sealed.count), reader)
      if vector.result == "invalid" && !vector.flags.contains("ValidFinalChunk") {
        outcome.error = VectorCheckError.lengthNotRefused
        return outcome
      }
      outcome.released = try opener.read(offset: 0, count: Int(opener.plaintextByteCount))
    } catch {
      outcome.error = error
    }
    return outcome
  }

  static func reseal(_ message: [UInt8], with sealer: ChunkedEncryption.Sealer) throws -> [UInt8] {
    var out = [UInt8]()
    try sealer.update(message) { out += $0 }
    try sealer.finish { out += $0 }
    return out
  }

  static func code(_ error: Error) -> String {
    switch error {
    case let error as TaskCryptoError: return error.code
    case let error as VectorCheckError: return error.description
    default: return "\(error)"
    }
  }

  static func sha512(_ bytes: [UInt8]) -> [UInt8] { SHA512.hash(bytes) }

  static func hex(_ text: String) -> [UInt8]? { Hex.decode(text) }
}
