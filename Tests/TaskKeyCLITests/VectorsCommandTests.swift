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
}
