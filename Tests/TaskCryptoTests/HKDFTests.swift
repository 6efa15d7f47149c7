import XCTest

@testable import TaskCrypto

/// HKDF-Expand with SHA-512 against values from Python's `cryptography`
/// (HKDFExpand(SHA512)), an independent implementation.
final class HKDFTests: XCTestCase {
  func expand(_ key: [UInt8], _ info: [UInt8], _ count: Int) throws -> String {
    let output = try key.withUnsafeBytes { try HKDFSHA512.expand(rawKey: $0, info: info, outputByteCount: count) }
    return output.withUnsafeBytes { Hex.encode(Array($0)) }
  }

  func testExpandMatchesAnIndependentImplementationOverSeveralBlocks() throws {
    XCTAssertEqual(
      try expand(Array(0..<32), Array("info text".utf8), 200),
      "fbb6f7401dfacaa3359bb481bf0cfa1e1633151ae6245356a2d40d78b737451b827a82d7060ed28732934b68c567933f"
        + "f46a0358baf9e3254d5acef667cc4f7b031090d7843d73bdcc585b29ce26a6571c01eae95125c82dcdf20b1c8035172c"
        + "c9180a73fd001ece28c872180a0df01e04f08e6c1a99aa29c7cf6ce70d6071c364c3459b92530187413cae9193121b91"
        + "0c32466a09935273aea1070e28f90473ddfce778c240a6bc6d7af43520177fbcffc249c1f7c18e6702266678a80dbaca"
        + "7f3a086301fc77d6")
  }

  func testExpandWithEmptyInfoThroughThePublicAPI() throws {
    let key = try [UInt8](repeating: 0x0b, count: 32).withUnsafeBytes { try SymmetricKey(copying: $0) }
    let output = try HKDFSHA512.expand(pseudoRandomKey: key, info: [UInt8](), outputByteCount: 76)
    XCTAssertEqual(
      output.withUnsafeBytes { Hex.encode(Array($0)) },
      "ebe6ec7d9203cf8425a7bf06b48e18efeb0098b7f6e867aa89ce91b68c1f8bafeb01b5db781d8b4a1c7534ecf9cc99aa"
        + "4569f68db116cda19411b6597734b74490db0dfbdc18912f1f00f403")
  }

  func testOutputAboveTheRFCLimitIsRefused() {
    XCTAssertThrowsError(try expand([1], [], HKDFSHA512.maximumOutputByteCount + 1)) {
      XCTAssertEqual($0 as? TaskCryptoError, .tooLarge(byteCount: 255 * 64 + 1, limit: 255 * 64))
    }
    XCTAssertEqual(try expand([1], [], 0), "")
  }
}
