import AssistantKeys
import Foundation
import TaskCrypto

/// Checks vector files against this build: the engine behind
/// `taskkey vectors check` and the test that runs every file in `Vectors/`.
enum VectorChecker {
  /// The outcome for one file.
  struct FileReport: Equatable {
    /// The file's path as given.
    var path: String
    /// The format named in the file, or nil when unreadable.
    var format: String?
    /// How many cases ran.
    var cases: Int
    /// One line per failed case or file-level defect.
    var failures: [String]
    /// One line per group of cases skipped because TaskKey does not support
    /// its parameters (Wycheproof files).
    var skipped: [String] = []
    /// True when every case gave its expected outcome.
    var passed: Bool { failures.isEmpty }
  }

  /// The formats this build can check.
  static let formats =
    ["aes-256-gcm", "argon2id", "backup", "sealed-value", "vault", "wycheproof AES-GCM"]
    + AssistantKeyVectors.formats + AttachmentVectorCheck.formats

  /// Checks one file.
  static func check(path: String) -> FileReport {
    var report = FileReport(path: path, format: nil, cases: 0, failures: [])
    guard let data = FileManager.default.contents(atPath: path) else {
      report.failures.append("cannot read the file")
      return report
    }
    let decoder = JSONDecoder()
    guard let header = try? decoder.decode(VectorFileHeader.self, from: data) else {
      report.failures.append("not a vector file: no 'format' and 'version' fields")
      return report
    }
    if let attachment = AttachmentVectorCheck.report(data: data, path: path) { return attachment }
    if header.format == nil, header.algorithm == "AES-GCM",
      header.schema == "aead_test_schema.json" || header.schema == "aead_test_schema_v1.json"
    {
      report.format = "wycheproof AES-GCM"
      do {
        let file = try decoder.decode(WycheproofAEADFile.self, from: data)
        checkWycheproof(file, into: &report)
      } catch {
        report.failures.append("malformed Wycheproof file: \(error)")
      }
      return report
    }
    guard let format = header.format, let version = header.version else {
      report.failures.append("not a vector file: no 'format' and 'version' fields")
      return report
    }
    report.format = format
    if AssistantKeyVectors.formats.contains(format), let result = AssistantKeyVectors.check(data) {
      report.cases = result.cases
      report.failures = result.failures
      return report
    }
    do {
      switch (format, version) {
      case ("aes-256-gcm", 1):
        let file = try decoder.decode(AESGCMVectorFile.self, from: data)
        report.cases = file.tests.count
        report.failures = file.tests.compactMap(check)
      case ("argon2id", 1):
        let file = try decoder.decode(Argon2idVectorFile.self, from: data)
        for vector in file.tests {
          if vector.p != 1 || !vector.secret.isEmpty || !vector.ad.isEmpty {
            report.skipped.append(
              "case \(vector.id) (\(vector.comment)): p=\(vector.p) with a secret or associated data, which "
                + "libsodium's crypto_pwhash does not take; 'make interop' checks it with argon2-cffi")
            continue
          }
          report.cases += 1
          if let failure = check(vector) { report.failures.append(failure) }
        }
      case ("vault", 1):
        (report.cases, report.failures) = VaultVectorCheck.check(data: data, path: path)
      case ("backup", 1):
        (report.cases, report.failures) = BackupVectorCheck.check(data: data, path: path)
      case ("sealed-value", 1):
        let file = try decoder.decode(SealedValueVectorFile.self, from: data)
        report.cases = file.tests.count
        let keyring = try keyring(file.keys)
        report.failures = file.tests.compactMap { check($0, keyring: keyring) }
      default:
        report.failures.append("unknown format '\(format)' version \(version)")
      }
    } catch {
      report.failures.append("malformed vector file: \(error)")
    }
    return report
  }

  /// Runs the groups with 256-bit keys, 96-bit IVs and 128-bit tags and
  /// names the others as skipped. `valid` must open to `msg`; `invalid` must
  /// fail with `authentication_failed`; `acceptable` may do either, but if it
  /// opens it must give `msg` (Vectors/README.md).
  static func checkWycheproof(_ file: WycheproofAEADFile, into report: inout FileReport) {
    for group in file.testGroups {
      guard group.type == "AeadTest", group.keySize == 256, group.ivSize == 96, group.tagSize == 128 else {
        report.skipped.append(
          "group \(group.type) keySize=\(group.keySize) ivSize=\(group.ivSize) tagSize=\(group.tagSize) "
            + "(\(group.tests.count) tests)")
        continue
      }
      for test in group.tests {
        report.cases += 1
        let vector = AESGCMVector(
          id: test.tcId, comment: test.comment.isEmpty ? test.flags.joined(separator: ",") : test.comment,
          key: test.key, nonce: test.iv, aad: test.aad, plaintext: test.msg, ciphertext: test.ct, tag: test.tag,
          result: test.result == "invalid" ? "invalid" : "valid", error: "authentication_failed")
        guard let failure = check(vector) else { continue }
        // An acceptable case may be refused; it must never open to other bytes.
        if test.result == "acceptable" && !failure.contains("opened to different bytes") { continue }
        report.failures.append("tcId \(failure)")
      }
    }
  }

  static func check(_ vector: Argon2idVector) -> String? {
    let name = "case \(vector.id) (\(vector.comment))"
    guard let password = hex(vector.password), let salt = hex(vector.salt) else { return "\(name): a field is not hex" }
    let outcome = Result { () -> [UInt8] in
      let secret = try password.withUnsafeBytes { try SecureBytes(copying: $0) }
      let derived = try PasswordKDF.deriveBytes(
        from: secret, salt: salt, parameters: PasswordKDF.Parameters(opsLimit: vector.t, memoryKiB: vector.m),
        byteCount: vector.length)
      return derived.withUnsafeBytes { Array($0) }
    }
    switch (vector.result, outcome) {
    case ("valid", .success(let tag)):
      return tag == hex(vector.tag ?? "") ? nil : "\(name): derived other bytes"
    case ("invalid", .failure(let error as TaskCryptoError)):
      return error.code == vector.error ? nil : "\(name): expected \(vector.error ?? "?"), got \(error.code)"
    case (_, .failure(let error)):
      return "\(name): expected \(vector.result), got \(error)"
    case ("invalid", .success):
      return "\(name): expected \(vector.error ?? "?"), but it derived"
    default:
      return "\(name): unknown result '\(vector.result)'"
    }
  }

  /// Runs vector cases that each name a file in `directory` (the vault and
  /// backup vectors): reads the file, asks `outcome` for the outcome word
  /// from the closed set, and compares it with the case's `expect`.
  ///
  /// - Parameter outcome: opens the case's bytes; it may read further files
  ///   from `directory` and returns nil (with a failure line) when one is
  ///   missing.
  /// - Returns: one line per failed case.
  static func checkFileCases<Case>(
    _ cases: [Case], in directory: URL, id: (Case) -> Int, file: (Case) -> String, expect: (Case) -> String,
    outcome: (Case, [UInt8]) -> Result<String, FileCaseFailure>
  ) -> [String] {
    cases.compactMap { test in
      let name = file(test)
      guard let bytes = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
        return "case \(id(test)): cannot read \(name)"
      }
      switch outcome(test, [UInt8](bytes)) {
      case .failure(let failure):
        return "case \(id(test)): \(failure.message)"
      case .success(let got) where got != expect(test):
        return "case \(id(test)) (\(name)): expected \(expect(test)), got \(got)"
      case .success:
        return nil
      }
    }
  }

  /// Why a file case could not be run at all.
  struct FileCaseFailure: Error {
    /// One line for the report.
    var message: String
  }

  static func keyring(_ keys: [VectorKey]) throws -> Keyring {
    let noteKeys = try keys.map { entry -> NoteKey in
      let line = Array("\(entry.kid):\(entry.key)".utf8)
      return try line.withUnsafeBytes { try NoteKey.parseKeyFile($0) }
    }
    guard let first = noteKeys.first else { throw TaskCryptoError.malformedKeyFile(reason: "no keys") }
    return try Keyring(keys: noteKeys, primaryID: first.id)
  }

  static func check(_ vector: AESGCMVector) -> String? {
    let name = "case \(vector.id) (\(vector.comment))"
    guard let keyBytes = hex(vector.key), let nonce = hex(vector.nonce), let aad = hex(vector.aad),
      let plaintext = hex(vector.plaintext), let ciphertext = hex(vector.ciphertext), let tag = hex(vector.tag)
    else { return "\(name): a field is not hex" }
    do {
      let key = try keyBytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
      let box = try AES.GCM.SealedBox(combined: nonce + ciphertext + tag)
      let outcome = Result { try AES.GCM.open(box, using: key, authenticating: aad) }
      switch (vector.result, outcome) {
      case ("valid", .success(let opened)):
        return opened == plaintext ? nil : "\(name): opened to different bytes"
      case ("invalid", .failure(let error as TaskCryptoError)):
        return error.code == vector.error ? nil : "\(name): expected \(vector.error ?? "?"), got \(error.code)"
      case ("valid", .failure(let error)):
        return "\(name): expected success, got \(error)"
      case ("invalid", .success):
        return "\(name): expected \(vector.error ?? "?"), but it opened"
      default:
        return "\(name): unknown result '\(vector.result)'"
      }
    } catch {
      return "\(name): \(error)"
    }
  }

  static func check(_ vector: SealedValueVector, keyring: Keyring) -> String? {
    let name = "case \(vector.id) (\(vector.comment))"
    let outcome = Result { () -> [UInt8] in
      if vector.openAs == "text" {
        return Array(try SealedValue.open(vector.value, using: keyring, context: vector.context).utf8)
      }
      return try SealedValue.openBytes(vector.value, using: keyring, context: vector.context)
    }
    switch (vector.result, outcome) {
    case ("valid", .success(let opened)):
      guard SealedValue.isSealed(vector.value) else { return "\(name): a valid case must be sealed" }
      return opened == hex(vector.plaintext ?? "") ? nil : "\(name): opened to different bytes"
    case ("plain", .success(let opened)):
      guard !SealedValue.isSealed(vector.value) else { return "\(name): taken as sealed" }
      return opened == Array(vector.value.utf8) ? nil : "\(name): plain value changed"
    case ("invalid", .failure(let error as TaskCryptoError)):
      return error.code == vector.error ? nil : "\(name): expected \(vector.error ?? "?"), got \(error.code)"
    case (_, .failure(let error)):
      return "\(name): expected \(vector.result), got \(error)"
    case ("invalid", .success):
      return "\(name): expected \(vector.error ?? "?"), but it opened"
    default:
      return "\(name): unknown result '\(vector.result)'"
    }
  }

  /// Strict lowercase hex, or nil.
  static func hex(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var out = [UInt8]()
    out.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
      guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
      out.append(high << 4 | low)
      index += 2
    }
    return out
  }

  private static func nibble(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    default: return nil
    }
  }
}
