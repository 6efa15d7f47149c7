import XCTest

@testable import TaskCrypto

/// The zlib reader used only for the published Cobblestone vectors:
/// streams made by Python's zlib, and the ways a stream is refused.
final class InflateTests: XCTestCase {
  func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex)! }

  func testFixedHuffmanStoredAndEmptyStreams() throws {
    XCTAssertEqual(try Inflate.zlib(bytes("78dacb48cdc9c957c8402701680308b1")), Array("hello hello hello hello".utf8))
    XCTAssertEqual(try Inflate.zlib(bytes("7801010300fcff616263024d0127")), Array("abc".utf8))
    XCTAssertEqual(try Inflate.zlib(bytes("7801010000ffff00000001")), [])
  }

  func testDamagedStreamsAreRefused() {
    let good = bytes("78dacb48cdc9c957c8402701680308b1")
    var checksum = good
    checksum[checksum.count - 1] ^= 1
    XCTAssertThrowsError(try Inflate.zlib(checksum)) {
      XCTAssertEqual($0 as? Inflate.Failure, Inflate.Failure(reason: "Adler-32 mismatch"))
    }
    XCTAssertThrowsError(try Inflate.zlib(Array(good.dropLast(6))))
    XCTAssertThrowsError(try Inflate.zlib([0x78, 0x9d, 0, 0, 0, 0]))  // header check bits wrong
    XCTAssertThrowsError(try Inflate.zlib(good, limit: 10)) {
      XCTAssertEqual($0 as? Inflate.Failure, Inflate.Failure(reason: "output above 10 bytes"))
    }
  }
}
