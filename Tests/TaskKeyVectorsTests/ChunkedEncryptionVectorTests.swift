import Foundation
import TaskKeyVectors
import XCTest

/// The published Cobblestone-256 vectors (Wycheproof), through every path.
final class ChunkedEncryptionVectorTests: XCTestCase {
  static let file = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors/wycheproof/c2sp_chunked_encryption_aes_256_gcm_test.json")

  func testEveryPublishedVectorPassesEveryPath() throws {
    let data = try Data(contentsOf: Self.file)
    let report = try XCTUnwrap(ChunkedEncryptionVectors.check(data))
    XCTAssertEqual(report.cases, 35)
    XCTAssertEqual(report.failures, [])
    XCTAssertEqual(report.skipped, [])
  }

  func testAGroupOfAnotherAEADIsSkippedAndCounted() throws {
    var text = try String(contentsOf: Self.file, encoding: .utf8)
    text = text.replacingOccurrences(of: "\"aead\": \"AEAD_AES_256_GCM\"", with: "\"aead\": \"AEAD_AES_128_GCM\"")
    let report = try XCTUnwrap(ChunkedEncryptionVectors.check(Data(text.utf8)))
    XCTAssertEqual(report.cases, 0)
    XCTAssertEqual(report.skipped.map(\.count), [35])
  }

  func testAnotherSchemaIsNotTaken() {
    XCTAssertNil(ChunkedEncryptionVectors.check(Data("{\"schema\":\"aead_test_schema.json\"}".utf8)))
  }

  func testAWrongExpectationIsReported() throws {
    // A valid vector whose digest is altered must be reported, so the check can fail.
    var text = try String(contentsOf: Self.file, encoding: .utf8)
    text = text.replacingOccurrences(
      of:
        "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
      with: String(repeating: "00", count: 64))
    let report = try XCTUnwrap(ChunkedEncryptionVectors.check(Data(text.utf8)))
    XCTAssertTrue(report.failures.contains { $0.hasPrefix("tcId 1 (empty message)") }, "\(report.failures)")
  }
}
