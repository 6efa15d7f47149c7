import Foundation
import Testing

@testable import TaskKeyCLI
@testable import TaskKeyVectors

/// The deterministic generator of `Vectors/key-file-v1.json`: one valid key
/// file with and without its newline, and one defect per case, each with the
/// one outcome of docs/formats/key-file.md. Fails when the committed file
/// drifts; `make vectors` rewrites it.
@Suite("Key-file vectors")
struct KeyFileVectorGenerationTests {
  static let kid = "0a0b0c0d"
  static let key = (0..<32).map { String(format: "%02x", $0) }.joined()
  static let line = kid + ":" + key

  static func file() -> KeyFileVectorFile {
    var tests = [KeyFileVector]()
    func add(_ comment: String, _ content: [UInt8], mode: String = "600", error: String? = nil) {
      tests.append(
        KeyFileVector(
          id: tests.count + 1, comment: comment, content: VectorVerdict.hex(content), mode: mode,
          result: error == nil ? "valid" : "invalid", kid: error == nil ? kid : nil, key: error == nil ? key : nil,
          error: error))
    }
    let text = Array(line.utf8)
    add("73 bytes, no newline", text)
    add("74 bytes, one LF", text + [0x0a])
    add("mode 400 (owner read only) is private too", text + [0x0a], mode: "400")
    add("CR LF line end", text + [0x0d, 0x0a], error: "malformed_key_file")
    add("two LFs", text + [0x0a, 0x0a], error: "malformed_key_file")
    add("a second line", text + [0x0a] + text, error: "malformed_key_file")
    add("72 bytes: one key digit missing", Array(text.dropLast()), error: "malformed_key_file")
    add("a trailing space", text + [0x20], error: "malformed_key_file")
    add("a leading space", [0x20] + Array(text.dropLast()), error: "malformed_key_file")
    add("a UTF-8 byte-order mark", [0xef, 0xbb, 0xbf] + text, error: "malformed_key_file")
    add("empty file", [], error: "malformed_key_file")
    add("upper-case key id", Array((kid.uppercased() + ":" + key).utf8), error: "malformed_key_file")
    add("upper-case key hex", Array((kid + ":" + key.uppercased()).utf8), error: "malformed_key_file")
    add("'=' in place of ':'", Array((kid + "=" + key).utf8), error: "malformed_key_file")
    add("a 'g' in the key", Array((kid + ":g" + key.dropFirst()).utf8), error: "malformed_key_file")
    add(
      "7-digit key id and 65-digit key", Array((String(kid.dropLast()) + ":" + key + "0").utf8),
      error: "malformed_key_file")
    add("mode 640: group can read", text + [0x0a], mode: "640", error: "unsafe_permissions")
    add("mode 604: others can read", text + [0x0a], mode: "604", error: "unsafe_permissions")
    add("mode 620: group can write", text + [0x0a], mode: "620", error: "unsafe_permissions")
    add(
      "mode 644 wins over a malformed body: permissions are checked first", text + [0x0d, 0x0a],
      mode: "644", error: "unsafe_permissions")
    return KeyFileVectorFile(
      description:
        "Key files, version 1 (docs/formats/key-file.md). Write each case's 'content' to a new file with "
        + "'mode' and read it as a key file: valid cases give 'kid' and 'key', invalid ones 'error'.",
      tests: tests)
  }

  @Test func keyFileVectorsMatchTheCommittedFile() throws {
    try VectorGenerationTests().compare(Self.file(), name: "key-file-v1.json")
  }

  @Test func everyCaseGivesItsOutcomeAndAChangedOutcomeFails() throws {
    let data = try JSONEncoder().encode(Self.file())
    var report = VectorReport(path: "key-file-v1.json")
    try KeyFileVectorChecker.check(data, path: "key-file-v1.json", readers: .taskkey, into: &report)
    #expect(report.failures.isEmpty, "\(report.failures)")
    #expect(report.passed == Self.file().tests.count)
    var broken = Self.file()
    broken.tests[0].key = String(repeating: "0", count: 64)
    broken.tests[3].error = "unsafe_permissions"
    var brokenReport = VectorReport(path: "key-file-v1.json")
    try KeyFileVectorChecker.check(try JSONEncoder().encode(broken), path: "x", readers: .taskkey, into: &brokenReport)
    #expect(brokenReport.failed == 2)
  }
}
