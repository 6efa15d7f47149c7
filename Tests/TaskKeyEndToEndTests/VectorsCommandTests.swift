import Foundation
import TaskKeyTestSupport
import Testing

@Suite("taskkey vectors check")
struct VectorsCommandTests {
  static let vectors = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors").path

  @Test func everyCommittedVectorFilePasses() throws {
    let result = try TaskKeyBinary.run(["vectors", "check", Self.vectors])
    #expect(result.status == 0, "\(result.stdoutText)\(result.stderr)")
    let files = try FileManager.default.subpathsOfDirectory(atPath: Self.vectors).filter { $0.hasSuffix(".json") }
    #expect(!files.isEmpty)
    #expect(result.stdoutText.contains("\(files.count) passed, 0 failed"))
  }

  @Test func aDriftedCaseFailsWithExitCode30AndNamesTheCase() throws {
    let home = try TemporaryDirectory()
    let original = try String(contentsOfFile: Self.vectors + "/sealed-value-v1.json", encoding: .utf8)
    let broken = original.replacingOccurrences(of: "\"error\" : \"truncated\"", with: "\"error\" : \"invalid_base64\"")
    #expect(broken != original)
    try broken.write(toFile: home.path("broken.json"), atomically: true, encoding: .utf8)
    let result = try TaskKeyBinary.run(["vectors", "check", home.path("broken.json")])
    #expect(result.status == 30)
    #expect(result.stdoutText.contains("FAIL"))
    #expect(result.stdoutText.contains("expected invalid_base64, got truncated"))
    #expect(result.stdoutText.contains("0 passed, 1 failed"))
  }

  @Test func jsonOutputHasTheDocumentedShape() throws {
    let result = try TaskKeyBinary.run(["vectors", "check", "--json", Self.vectors])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    #expect(object["failed"] as? Int == 0)
    let files = try #require(object["files"] as? [[String: Any]])
    #expect(files.contains { $0["format"] as? String == "sealed-value" })
  }

  @Test func unknownFormatsFail() throws {
    let home = try TemporaryDirectory()
    try #"{"format": "mystery", "version": 1}"#.write(toFile: home.path("m.json"), atomically: true, encoding: .utf8)
    let result = try TaskKeyBinary.run(["vectors", "check", home.path("m.json")])
    #expect(result.status == 30)
    #expect(result.stdoutText.contains("unknown format 'mystery'"))
  }

  @Test func wycheproofGroupsRunAndSkippedGroupsAreNamed() throws {
    let result = try TaskKeyBinary.run(["vectors", "check", Self.vectors + "/wycheproof/aes_gcm_test.json"])
    #expect(result.status == 0)
    #expect(result.stdoutText.contains("wycheproof AES-GCM, 66 cases"))
    #expect(result.stdoutText.contains("group AeadTest keySize=128 ivSize=96 tagSize=128 (67 tests)"))
    #expect(result.stdoutText.contains("group AeadTest keySize=256 ivSize=0 tagSize=128 (2 tests)"))
  }

  @Test func aWycheproofInvalidCaseMarkedValidFails() throws {
    let home = try TemporaryDirectory()
    let original = try String(contentsOfFile: Self.vectors + "/wycheproof/aes_gcm_test.json", encoding: .utf8)
    // tcId 1 of the 256-bit group is valid; turning every "invalid" into
    // "valid" makes the modified-tag cases claim to open.
    let broken = original.replacingOccurrences(of: "\"result\": \"invalid\"", with: "\"result\": \"valid\"")
    #expect(broken != original)
    try broken.write(toFile: home.path("w.json"), atomically: true, encoding: .utf8)
    let result = try TaskKeyBinary.run(["vectors", "check", home.path("w.json")])
    #expect(result.status == 30)
    #expect(result.stdoutText.contains("expected success, got authentication failed"))
  }
}
