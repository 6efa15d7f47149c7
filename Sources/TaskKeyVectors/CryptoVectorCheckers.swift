import CommandKit
import FoundationEssentials
import TaskCrypto

/// `Vectors/aes-256-gcm.json`: AES-256-GCM known answers.
enum AESGCMVectorChecker: VectorChecker {
  static let formats = ["aes-256-gcm"]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    let file = try JSONDecoder().decode(AESGCMVectorFile.self, from: data)
    for vector in file.tests { report.record(check(vector)) }
  }

  /// Opens `nonce || ciphertext || tag` with `key` and `aad`: a valid case
  /// must give `plaintext`, an invalid one fail with `error`.
  static func check(_ vector: AESGCMVector) -> String? {
    let name = "case \(vector.id) (\(vector.comment))"
    guard let keyBytes = VectorVerdict.hex(vector.key), let nonce = VectorVerdict.hex(vector.nonce),
      let aad = VectorVerdict.hex(vector.aad), let plaintext = VectorVerdict.hex(vector.plaintext),
      let ciphertext = VectorVerdict.hex(vector.ciphertext), let tag = VectorVerdict.hex(vector.tag)
    else { return "\(name): a field is not hex" }
    let outcome = Result { () throws -> [UInt8] in
      let key = try keyBytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
      return try AES.GCM.open(AES.GCM.SealedBox(combined: nonce + ciphertext + tag), using: key, authenticating: aad)
    }
    return VectorVerdict.verdict(name, result: vector.result, expectedError: vector.error, outcome: outcome) {
      $0 == plaintext ? nil : "opened to different bytes"
    }
  }
}

/// `Vectors/argon2id.json`: the passphrase KDF through libsodium. Cases that
/// need more than one lane, a secret or associated data are skipped and
/// named (`make interop` checks them with the reference implementation).
enum Argon2idVectorChecker: VectorChecker {
  static let formats = ["argon2id"]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    let file = try JSONDecoder().decode(Argon2idVectorFile.self, from: data)
    for vector in file.tests {
      guard vector.p == 1, vector.secret.isEmpty, vector.ad.isEmpty else {
        report.skip(
          "case \(vector.id) (\(vector.comment)): p=\(vector.p) with a secret or associated data, which "
            + "libsodium's crypto_pwhash does not take; 'make interop' checks it with argon2-cffi", count: 1)
        continue
      }
      report.record(check(vector))
    }
  }

  static func check(_ vector: Argon2idVector) -> String? {
    let name = "case \(vector.id) (\(vector.comment))"
    guard let password = VectorVerdict.hex(vector.password), let salt = VectorVerdict.hex(vector.salt) else {
      return "\(name): a field is not hex"
    }
    let outcome = Result { () throws -> [UInt8] in
      let secret = try password.withUnsafeBytes { try SecureBytes(copying: $0) }
      let derived = try PasswordKDF.deriveBytes(
        from: secret, salt: salt, parameters: PasswordKDF.Parameters(opsLimit: vector.t, memoryKiB: vector.m),
        byteCount: vector.length)
      return derived.withUnsafeBytes { Array($0) }
    }
    return VectorVerdict.verdict(name, result: vector.result, expectedError: vector.error, outcome: outcome) {
      $0 == VectorVerdict.hex(vector.tag ?? "") ? nil : "derived other bytes"
    }
  }
}

/// `Vectors/sealed-value-v1.json`: the sealed-value reader, as bytes or as
/// text (which reaches the `invalid_utf8` step).
enum SealedValueVectorChecker: VectorChecker {
  static let formats = ["sealed-value"]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    let file = try JSONDecoder().decode(SealedValueVectorFile.self, from: data)
    let keyring = try keyring(file.keys)
    for vector in file.tests { report.record(check(vector, keyring: keyring)) }
  }

  static func keyring(_ keys: [VectorKey]) throws -> Keyring {
    let noteKeys = try keys.map { entry -> NoteKey in
      try Array("\(entry.kid):\(entry.key)".utf8).withUnsafeBytes { try NoteKey.parseKeyFile($0) }
    }
    guard let first = noteKeys.first else { throw TaskCryptoError.malformedKeyFile(reason: "no keys") }
    return try Keyring(keys: noteKeys, primaryID: first.id)
  }

  static func check(_ vector: SealedValueVector, keyring: Keyring) -> String? {
    let name = "case \(vector.id) (\(vector.comment))"
    let outcome = Result { () throws -> [UInt8] in
      if vector.openAs == "text" {
        return Array(try SealedValue.open(vector.value, using: keyring, context: vector.context).utf8)
      }
      return try SealedValue.openBytes(vector.value, using: keyring, context: vector.context)
    }
    return VectorVerdict.verdict(name, result: vector.result, expectedError: vector.error, outcome: outcome) {
      opened in
      switch vector.result {
      case "valid":
        guard SealedValue.isSealed(vector.value) else { return "a valid case must be sealed" }
        return opened == VectorVerdict.hex(vector.plaintext ?? "") ? nil : "opened to different bytes"
      case "plain":
        guard !SealedValue.isSealed(vector.value) else { return "taken as sealed" }
        return opened == Array(vector.value.utf8) ? nil : "plain value changed"
      default:
        return "unknown result '\(vector.result)'"
      }
    }
  }
}
