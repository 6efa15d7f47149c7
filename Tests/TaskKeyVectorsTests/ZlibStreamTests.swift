import Foundation
import TaskCrypto
import TaskKeyTestSupport
import XCTest

@testable import TaskKeyVectors

/// The zlib reader (Debian's zlib) that reads the published Cobblestone
/// vectors: streams made by Python's zlib, every ciphertext of the
/// published file, and the ways a stream is refused, each with its error.
final class ZlibStreamTests: XCTestCase {
  func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex)! }

  /// "hello hello hello hello" (fixed Huffman codes, back references).
  var hello: [UInt8] { bytes("78dacb48cdc9c957c8402701680308b1") }

  func testFixedHuffmanStoredAndEmptyStreams() throws {
    XCTAssertEqual(try ZlibStream.decompress(hello), Array("hello hello hello hello".utf8))
    XCTAssertEqual(try ZlibStream.decompress(bytes("7801010300fcff616263024d0127")), Array("abc".utf8))
    XCTAssertEqual(try ZlibStream.decompress(bytes("7801010000ffff00000001")), [])
  }

  func testAStreamLongerThanOneOutputChunk() throws {
    // zlib.compress(b"TaskKey " * 20000, 9): 160,000 bytes, more than the
    // 64 KiB zlib is asked to write per call.
    let stream = bytes(
      "78daedc5210100300800b02af4b9a500027589a2fd23bcc0669635f7f446da" + String(repeating: "b66ddb", count: 77)
        + "f6e707c03d7092")
    let output = try ZlibStream.decompress(stream)
    XCTAssertEqual(output.count, 160_000)
    XCTAssertEqual(output, Array(String(repeating: "TaskKey ", count: 20_000).utf8))
  }

  func testEveryPublishedCiphertextDecompresses() throws {
    struct File: Decodable {
      struct Group: Decodable { var tests: [Test] }
      struct Test: Decodable { var ct: String }
      var testGroups: [Group]
    }
    let url = CommittedVectors.directory.appendingPathComponent(
      "wycheproof/c2sp_chunked_encryption_aes_256_gcm_test.json")
    let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
    let ciphertexts = file.testGroups.flatMap(\.tests).map(\.ct)
    XCTAssertEqual(ciphertexts.count, 35)
    for ct in ciphertexts {
      let compressed = try XCTUnwrap(Hex.decode(ct))
      XCTAssertNoThrow(try ZlibStream.decompress(compressed), ct)
      // A stream cut before its checksum is refused, never returned short.
      XCTAssertThrowsError(try ZlibStream.decompress(Array(compressed.dropLast())))
    }
  }

  func testDamagedStreamsAreRefusedWithTheirCause() {
    var checksum = hello
    checksum[checksum.count - 1] ^= 1
    XCTAssertThrowsError(try ZlibStream.decompress(checksum)) {
      XCTAssertEqual($0 as? VectorCheckError, .corruptCompressedStream(detail: "incorrect data check"))
    }
    XCTAssertThrowsError(try ZlibStream.decompress([0x78, 0x9d, 0, 0, 0, 0])) {
      XCTAssertEqual($0 as? VectorCheckError, .corruptCompressedStream(detail: "incorrect header check"))
    }
    XCTAssertThrowsError(try ZlibStream.decompress(Array(hello.dropLast(6)))) {
      XCTAssertEqual($0 as? VectorCheckError, .truncatedCompressedStream)
    }
    XCTAssertThrowsError(try ZlibStream.decompress([])) {
      XCTAssertEqual($0 as? VectorCheckError, .truncatedCompressedStream)
    }
    XCTAssertThrowsError(try ZlibStream.decompress(hello + [0])) {
      XCTAssertEqual($0 as? VectorCheckError, .trailingCompressedBytes(count: 1))
    }
    XCTAssertThrowsError(try ZlibStream.decompress(hello, limit: 10)) {
      XCTAssertEqual($0 as? VectorCheckError, .decompressedTooLarge(limit: 10))
    }
  }
}
