import Foundation
import TaskCrypto
import TaskKeyTestSupport
import Testing

@testable import AssistantKeys
@testable import TaskKeyVectors

/// The deterministic generator of `Vectors/assistant-last-used-v1.json`:
/// an authentic last-used file, and one defect per invalid case with the
/// outcome docs/formats/last-used.md gives it, written here by hand (not
/// computed by the reader under test).
@Suite("Last-used vectors")
struct LastUsedVectorTests {
  static let url = AssistantKeyVectorGenerationTests.vectors.appendingPathComponent("assistant-last-used-v1.json")
  typealias LastUsedFile = AssistantKeyVectors.LastUsedFile

  static func makeFile() throws -> LastUsedFile {
    let integrityKey = try (0..<32).map { UInt8($0) }.withUnsafeBytes { try SymmetricKey(copying: $0) }
    let otherKey = try (0..<32).map { UInt8(0xff - $0) }.withUnsafeBytes { try SymmetricKey(copying: $0) }
    let ids = try AssistantKeyVectorGenerator.validKeys().prefix(3).map(\.key.id).sorted()
    let table = [ids[0]: Int64(1_800_000_100), ids[1]: Int64(1_800_000_160)]
    let good = String(decoding: LastUsedFormat.encode(table, key: integrityKey), as: UTF8.self)
    let expected = Dictionary(uniqueKeysWithValues: table.map { ($0.key.text, $0.value) })
    let header = LastUsedFormat.header
    func sealed(_ header: String, _ lines: [String], key: SymmetricKey = integrityKey) -> String {
      String(decoding: AuthenticatedFile.seal(header: header, lines: lines, key: key), as: UTF8.self)
    }
    let lines = ["\(ids[0]) 1800000100", "\(ids[1]) 1800000160"]
    var tests = [LastUsedFile.Test]()
    func add(_ comment: String, _ file: String, damage: String? = nil, lastUsed: [String: Int64]? = nil) {
      tests.append(
        LastUsedFile.Test(
          id: tests.count + 1, comment: comment, file: file, result: damage == nil ? "valid" : "invalid",
          lastUsed: damage == nil ? lastUsed : nil, damage: damage))
    }
    add("two keys, sorted by id", good, lastUsed: expected)
    add("no key used yet", sealed(header, []), lastUsed: [:])
    add(
      "the registry's generation line after the header, re-authenticated: the last-used file has none",
      sealed(header, ["generation 7"] + lines), damage: "malformed")
    add(
      "the registry's header with last-used lines, re-authenticated", sealed(RegistryFormat.header, lines),
      damage: "malformed")
    add(
      "a time changed, MAC unchanged", good.replacingOccurrences(of: "1800000160", with: "1800000999"),
      damage: "authentication_failed")
    add(
      "the right body with a MAC under another key", sealed(header, lines, key: otherKey),
      damage: "authentication_failed")
    // Fixed in issue 22 (item 11): this case said `unsupported_version`,
    // which only a reader of version 1 alone gives.
    add(
      "a version-1 body under the version-2 version line: read as version 2, its header MAC fails",
      sealed("taskkey assistant-key last-used v2", lines), damage: "authentication_failed")
    add("lines out of id order, re-authenticated", sealed(header, lines.reversed()), damage: "malformed")
    add("the same id twice, re-authenticated", sealed(header, [lines[0], lines[0]]), damage: "malformed")
    add("a leading zero in the time, re-authenticated", sealed(header, ["\(ids[0]) 01800000100"]), damage: "malformed")
    add("a third field, re-authenticated", sealed(header, [lines[0] + " x"]), damage: "malformed")
    add("no LF after the MAC line", String(good.dropLast()), damage: "malformed")
    add(
      "CR LF line ends, re-authenticated",
      sealed(header + "\r", lines.map { $0 + "\r" }), damage: "malformed")
    add(
      "unknown version 3: neither version line, read as version 1",
      sealed("taskkey assistant-key last-used v3", lines), damage: "unsupported_version")
    return LastUsedFile(
      format: LastUsedFile.format, version: 1,
      description:
        "Assistant last-used file, version 1 (docs/formats/last-used.md). Read each case's 'file' with "
        + "'integrity_key': valid cases give 'last_used'; an invalid file is treated as absent (every key never used).",
      integrityKey: AssistantKeyVectorGenerator.hex([UInt8](0..<32)), tests: tests)
  }

  @Test func checkedInVectorsMatchTheGenerator() throws {
    #expect(
      try CommittedVectors.drifted(json: Self.makeFile(), name: "assistant-last-used-v1.json").isEmpty,
      "Vectors/assistant-last-used-v1.json drifted from the generator; run 'make vectors'")
  }

  @Test func everyCaseGivesItsStatedOutcomeAndAWrongOneFails() throws {
    let report = try #require(AssistantKeyVectors.check(Data(contentsOf: Self.url)))
    #expect(report == .init(format: "assistant-last-used", cases: 14, failures: []))
    var file = try Self.makeFile()
    let firstID = try #require(file.tests[0].lastUsed?.keys.sorted().first)
    file.tests[0].lastUsed?[firstID] = 1
    file.tests[2].damage = "authentication_failed"
    let broken = try #require(AssistantKeyVectors.check(JSONEncoder().encode(file)))
    #expect(broken.failures.count == 2)
  }

  /// A list shows "never used" for a file with a generation line: the file
  /// is refused and treated as absent.
  @Test func aLastUsedFileWithAGenerationLineReadsAsNeverUsed() throws {
    let file = try Self.makeFile()
    let key = try (0..<32).map { UInt8($0) }.withUnsafeBytes { try SymmetricKey(copying: $0) }
    #expect(throws: AssistantKeyError.self) { try LastUsedFormat.decode(Array(file.tests[2].file.utf8), key: key) }
  }
}
