import Foundation
import TaskKeyTestSupport
import Testing

@Suite("taskkey vectors check")
struct VectorsCommandTests {
  static let vectors = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors").path

  /// Per-file case counts, a line of file totals, and the case totals as
  /// the last line (what CI reads).
  @Test func everyCommittedVectorFilePassesAndTheLastLineCountsCases() throws {
    let result = try TaskKeyBinary.run(["vectors", "check", Self.vectors])
    #expect(result.status == 0, "\(result.stdoutText)\(result.stderr)")
    let files = try FileManager.default.subpathsOfDirectory(atPath: Self.vectors).filter { $0.hasSuffix(".json") }
    #expect(!files.isEmpty)
    let lines = result.stdoutText.split(separator: "\n").map(String.init)
    #expect(lines.contains("files: \(files.count) passed, 0 failed"))
    let fileLines = lines.filter { $0.hasPrefix("ok   ") }
    #expect(fileLines.count == files.count)
    // The last line is the sum of the per-file counts.
    var sums = [0, 0, 0]
    for line in fileLines {
      let counts = try #require(line.split(separator: ":").last).split(separator: ",").map {
        Int($0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0]) ?? -1
      }
      for index in 0..<3 { sums[index] += counts[index] }
    }
    #expect(sums[0] > 150 && sums[1] == 0 && sums[2] > 0)
    #expect(lines.last == "\(sums[0]) passed, 0 failed, \(sums[2]) skipped")
    // Vectors/README.md quotes this line as its example; it must be true.
    let readme = try String(contentsOfFile: Self.vectors + "/README.md", encoding: .utf8)
    #expect(readme.contains("`\(lines.last ?? "")` for the files here"), "update the example in Vectors/README.md")
  }

  @Test func aDriftedCaseFailsWithExitCode30AndNamesTheCase() throws {
    let result = try checkAltered(
      "sealed-value-v1.json", replacing: "\"error\" : \"truncated\"", with: "\"error\" : \"invalid_base64\"")
    #expect(result.status == 30)
    #expect(result.stdoutText.contains("FAIL"))
    #expect(result.stdoutText.contains("expected invalid_base64, got truncated"))
    #expect(result.stdoutText.contains("files: 0 passed, 1 failed"))
    #expect(result.stdoutText.hasSuffix("33 passed, 2 failed, 0 skipped\n"))
  }

  @Test func jsonOutputHasTheDocumentedShape() throws {
    let result = try TaskKeyBinary.run(["vectors", "check", "--json", Self.vectors])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    #expect(object["failed"] as? Int == 0)
    #expect(object["files_failed"] as? Int == 0)
    let files = try #require(object["files"] as? [[String: Any]])
    #expect(files.contains { $0["format"] as? String == "sealed-value" })
    let wycheproof = try #require(files.first { $0["format"] as? String == "wycheproof AES-GCM" })
    #expect(wycheproof["passed"] as? Int == 66)
    #expect(wycheproof["skipped"] as? Int == 250)
    #expect(
      (wycheproof["skipped_groups"] as? [String])?.contains(
        "group AeadTest keySize=128 ivSize=96 tagSize=128 (67 tests)") == true)
    let sum = { (key: String) in files.reduce(0) { $0 + ($1[key] as? Int ?? 0) } }
    #expect(object["passed"] as? Int == sum("passed"))
    #expect(object["skipped"] as? Int == sum("skipped"))
  }

  /// A vector file is read by the one strict JSON reader before its
  /// fields are mapped: a member named twice (here the format, so which
  /// copy a lenient decoder keeps would choose the checker) is refused.
  @Test func aFileWithARepeatedMemberIsRefusedBeforeAnyCheck() throws {
    let result = try checkAltered(
      "sealed-value-v1.json", replacing: "\"format\"", with: "\"format\" : \"mystery\", \"format\"")
    #expect(result.status == 30)
    #expect(
      result.stdoutText.contains("not JSON this reader accepts: a member name appears twice"), "\(result.stdoutText)")
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
    #expect(result.stdoutText.contains("(wycheproof AES-GCM): 66 passed, 0 failed, 250 skipped"))
    #expect(result.stdoutText.contains("group AeadTest keySize=128 ivSize=96 tagSize=128 (67 tests)"))
    #expect(result.stdoutText.contains("group AeadTest keySize=256 ivSize=0 tagSize=128 (2 tests)"))
  }

  @Test func aWycheproofInvalidCaseMarkedValidFails() throws {
    // Turning every "invalid" into "valid" makes the modified-tag cases claim to open.
    let result = try checkAltered(
      "wycheproof/aes_gcm_test.json", replacing: "\"result\": \"invalid\"", with: "\"result\": \"valid\"")
    #expect(result.status == 30)
    #expect(result.stdoutText.contains("expected success, got authentication failed"))
  }

  @Test func wycheproofHMACRunsTheFullTagGroupAndNamesTheRest() throws {
    let result = try TaskKeyBinary.run(["vectors", "check", Self.vectors + "/wycheproof/hmac_sha256_test.json"])
    #expect(result.status == 0, "\(result.stdoutText)")
    #expect(result.stdoutText.contains("(wycheproof HMAC-SHA256): 81 passed, 0 failed, 93 skipped"))
    #expect(result.stdoutText.contains("skipped: group MacTest keySize=256 tagSize=128 (81 tests)"))
    #expect(result.stdoutText.hasSuffix("81 passed, 0 failed, 93 skipped\n"))
  }

  @Test func aWycheproofModifiedHMACTagMarkedValidFails() throws {
    let result = try checkAltered(
      "wycheproof/hmac_sha256_test.json", replacing: "\"result\": \"invalid\"", with: "\"result\": \"valid\"")
    #expect(result.status == 30)
    #expect(result.stdoutText.contains("expected the tag to verify, but it did not"))
  }

  @Test func wycheproofHKDFRunsEveryGroupAndAChangedOutputFails() throws {
    let result = try TaskKeyBinary.run(["vectors", "check", Self.vectors + "/wycheproof/hkdf_sha512_test.json"])
    #expect(result.status == 0, "\(result.stdoutText)")
    #expect(result.stdoutText.hasSuffix("83 passed, 0 failed, 0 skipped\n"))
    // tcId 1's output, with its first byte changed.
    let altered = try checkAltered(
      "wycheproof/hkdf_sha512_test.json", replacing: "\"okm\": \"dd2599", with: "\"okm\": \"dd2598")
    #expect(altered.status == 30)
    #expect(altered.stdoutText.contains("derived other bytes"))
  }

  /// Checks a copy of a committed vector file with every `original` text
  /// replaced by `replacement` (which must change it).
  func checkAltered(_ name: String, replacing original: String, with replacement: String) throws -> ProcessResult {
    let home = try TemporaryDirectory()
    let text = try String(contentsOfFile: Self.vectors + "/" + name, encoding: .utf8)
    let altered = text.replacingOccurrences(of: original, with: replacement)
    #expect(altered != text)
    try altered.write(toFile: home.path("altered.json"), atomically: true, encoding: .utf8)
    return try TaskKeyBinary.run(["vectors", "check", home.path("altered.json")])
  }
}
