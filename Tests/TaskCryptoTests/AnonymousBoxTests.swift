import XCTest

@testable import TaskCrypto

/// Anonymous boxes: the X25519 public key against RFC 7748 §6.1, and every
/// way a box must fail to open.
final class AnonymousBoxTests: XCTestCase {
  func secret(_ hex: String) throws -> SecureBytes {
    try Hex.decode(hex)!.withUnsafeBytes { try SecureBytes(copying: $0) }
  }

  func testThePublicKeyIsRFC7748s() throws {
    let alice = try secret("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    XCTAssertEqual(
      Hex.encode(try AnonymousBox.publicKey(of: alice)),
      "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
  }

  func testABoxOpensForItsRecipientOnly() throws {
    let recipient = try AnonymousBox.generateKeyPair()
    let other = try AnonymousBox.generateKeyPair()
    let message = try secret("0000000211223344556677889900aabbccddeeff00112233445566778899aabbccddeeff")
    let box = try AnonymousBox.seal(message, to: recipient.publicKey)
    XCTAssertEqual(box.count, 36 + AnonymousBox.overheadByteCount)
    XCTAssertEqual(try AnonymousBox.open(box, publicKey: recipient.publicKey, secretKey: recipient.secretKey), message)
    XCTAssertNotEqual(box, try AnonymousBox.seal(message, to: recipient.publicKey), "a fresh ephemeral key each time")
    XCTAssertThrowsError(try AnonymousBox.open(box, publicKey: other.publicKey, secretKey: other.secretKey)) {
      XCTAssertEqual($0 as? TaskCryptoError, .authenticationFailed)
    }
    for index in [0, 31, 32, 47, 48, box.count - 1] {
      var flipped = box
      flipped[index] ^= 1
      XCTAssertThrowsError(
        try AnonymousBox.open(flipped, publicKey: recipient.publicKey, secretKey: recipient.secretKey), "byte \(index)")
    }
    for count in [0, 47, box.count - 1] {
      XCTAssertThrowsError(
        try AnonymousBox.open(Array(box.prefix(count)), publicKey: recipient.publicKey, secretKey: recipient.secretKey))
    }
  }

  func testKeysOfTheWrongSizeAreRefused() throws {
    let pair = try AnonymousBox.generateKeyPair()
    XCTAssertThrowsError(try AnonymousBox.seal(try secret("00"), to: Array(pair.publicKey.prefix(31))))
    XCTAssertThrowsError(try AnonymousBox.publicKey(of: try secret("0011")))
  }
}
