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
    /// True when every case gave its expected outcome.
    var passed: Bool { failures.isEmpty }
  }

  /// The formats this build can check.
  static let formats = ["aes-256-gcm", "sealed-value"]

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
    report.format = header.format
    do {
      switch (header.format, header.version) {
      case ("aes-256-gcm", 1):
        let file = try decoder.decode(AESGCMVectorFile.self, from: data)
        report.cases = file.tests.count
        report.failures = file.tests.compactMap(check)
      case ("sealed-value", 1):
        let file = try decoder.decode(SealedValueVectorFile.self, from: data)
        report.cases = file.tests.count
        let keyring = try keyring(file.keys)
        report.failures = file.tests.compactMap { check($0, keyring: keyring) }
      default:
        report.failures.append("unknown format '\(header.format)' version \(header.version)")
      }
    } catch {
      report.failures.append("malformed vector file: \(error)")
    }
    return report
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
