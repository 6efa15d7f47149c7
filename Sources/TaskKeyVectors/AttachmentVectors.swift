import FoundationEssentials
import TaskAttachments
import TaskCrypto

/// Checks `Vectors/attachment-v1.json` against this build, for `taskkey
/// vectors check` and for auditors: every case's file is opened as a
/// stream and by the random-access reader (the whole plaintext) with the
/// file's keyring and the case's record, and both must give the one
/// outcome its `expect` names: `valid` (opens to `plaintext`), `plain`
/// (passes through unchanged) or an error code (`AttachmentError.code`).
public enum AttachmentVectors {
  /// The format name in the file.
  public static let format = "attachment"

  /// The outcome of checking one vector file.
  public struct Report: Equatable, Sendable {
    /// How many cases ran.
    public var cases = 0
    /// One line per case that did not give its expected outcome.
    public var failures: [String] = []
  }

  /// The vector file, as the generator writes it.
  struct File: Codable {
    var format: String
    var version: Int
    var description: String
    var keys: [Key]
    var tests: [Case]
  }

  /// A keyring entry: the first is the primary.
  struct Key: Codable {
    var kid: String
    var key: String
  }

  /// One case: a whole attachment file and the outcome it must give.
  struct Case: Codable {
    var id: Int
    var comment: String
    var record: String
    var file: String
    var plaintext: String?
    var expect: String
  }

  /// Checks one vector file.
  ///
  /// - Parameter data: the file's bytes (JSON).
  /// - Returns: the report, or nil when the file's `format` is not
  ///   `attachment`, so that a caller can try another checker.
  public static func check(_ data: Data) -> Report? {
    struct Header: Decodable { var format: String? }
    guard (try? JSONDecoder().decode(Header.self, from: data))?.format == format else { return nil }
    var report = Report()
    do {
      let file = try JSONDecoder().decode(File.self, from: data)
      guard file.version == 1 else {
        report.failures.append("unknown version \(file.version) of format 'attachment'")
        return report
      }
      let keyring = try keyring(file.keys)
      report.cases = file.tests.count
      report.failures = file.tests.compactMap { check($0, keyring: keyring) }
    } catch {
      report.failures.append("malformed vector file: \(error)")
    }
    return report
  }

  static func keyring(_ keys: [Key]) throws -> Keyring {
    let noteKeys = try keys.map { entry in
      try Array("\(entry.kid):\(entry.key)".utf8).withUnsafeBytes { try NoteKey.parseKeyFile($0) }
    }
    guard let first = noteKeys.first else { throw TaskCryptoError.malformedKeyFile(reason: "no keys") }
    return try Keyring(keys: noteKeys, primaryID: first.id)
  }

  /// The outcome word of opening `bytes`: `valid`, `plain` or an error code,
  /// with the plaintext released.
  static func outcome(_ bytes: [UInt8], keyring: Keyring, record: String) -> (String, [UInt8]) {
    var offset = 0
    var output = [UInt8]()
    do {
      let summary = try Attachment.open(
        reading: { buffer in
          let count = Swift.min(buffer.count, bytes.count - offset)
          bytes[offset..<(offset + count)].withUnsafeBytes { buffer.copyMemory(from: $0) }
          offset += count
          return count
        }, writing: { output += $0 }, using: keyring, record: record)
      return (summary.isSealed ? "valid" : "plain", output)
    } catch let error as AttachmentError {
      return (error.code, output)
    } catch {
      return ("\(error)", output)
    }
  }

  /// The outcome word of the random-access reader (`AttachmentReader`,
  /// `attach open --range`) opening `bytes` and reading its whole
  /// plaintext, with the plaintext.
  static func randomAccessOutcome(_ bytes: [UInt8], keyring: Keyring, record: String) -> (String, [UInt8]) {
    let head = Array(bytes.prefix(Attachment.wrapperByteCount))
    guard Attachment.isSealed(prefix: head) else { return ("plain", bytes) }
    do {
      let (_, opener) = try AttachmentReader.open(
        head: head, size: UInt64(bytes.count), keyring: keyring, record: record
      ) { position, buffer in
        let start = Int(position)
        guard start + buffer.count <= bytes.count else { throw AttachmentError.truncatedWrapper(byteCount: start) }
        bytes[start..<(start + buffer.count)].withUnsafeBytes { buffer.copyMemory(from: $0) }
      }
      let plaintext = try opener.read(offset: 0, count: Int(opener.plaintextByteCount))
      return ("valid", plaintext)
    } catch let error as TaskCryptoError {
      // The reader's own `read` wraps the chunked AEAD's errors the same way.
      return (AttachmentError.crypto(error).code, [])
    } catch let error as AttachmentError {
      return (error.code, [])
    } catch {
      return ("\(error)", [])
    }
  }

  static func check(_ test: Case, keyring: Keyring) -> String? {
    let name = "case \(test.id) (\(test.comment))"
    guard let bytes = hex(test.file) else { return "\(name): 'file' is not hex" }
    let (got, output) = outcome(bytes, keyring: keyring, record: test.record)
    guard got == test.expect else { return "\(name): expected \(test.expect), got \(got)" }
    // Both readers give the case's outcome (issue 22, item 13).
    let (random, randomOutput) = randomAccessOutcome(bytes, keyring: keyring, record: test.record)
    guard random == test.expect else { return "\(name): random access: expected \(test.expect), got \(random)" }
    if test.expect == "valid" && randomOutput != output { return "\(name): random access opened to other bytes" }
    if test.expect == "valid" && output != hex(test.plaintext ?? "") { return "\(name): opened to other bytes" }
    if test.expect == "plain" && output != bytes { return "\(name): a plain file changed" }
    return nil
  }

  static func hex(_ text: String) -> [UInt8]? { [UInt8](lowercaseHex: text) }
}
