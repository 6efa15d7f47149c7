import TaskCrypto
import XCTest

@testable import TaskAttachments

/// `Attachment.StreamOpener`: sealed bytes pushed in any pieces open to
/// the same plaintext, and every refusal is the one the pull-style
/// `open` gives.
final class AttachmentStreamOpenerTests: XCTestCase {
  var keyring: Keyring!

  override func setUpWithError() throws {
    keyring = try Keyring.generate()
  }

  func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) } }

  /// `plain` sealed for `record` under the keyring's primary key.
  func sealed(_ plain: [UInt8], record: String = "attachment/1") throws -> [UInt8] {
    var input = plain[...]
    var output: [UInt8] = []
    _ = try Attachment.seal(
      reading: { buffer in
        let count = min(buffer.count, input.count)
        input.prefix(count).withUnsafeBytes { buffer.copyMemory(from: $0) }
        input = input.dropFirst(count)
        return count
      }, writing: { output += $0 }, using: keyring, record: record)
    return output
  }

  /// `sealed` pushed in pieces of `sizes` (cycled), then finished.
  func opened(_ sealed: [UInt8], pieces sizes: [Int], record: String = "attachment/1") throws -> (
    [UInt8], Attachment.Summary
  ) {
    let opener = Attachment.StreamOpener(keyring: keyring, record: record)
    var plain: [UInt8] = []
    var offset = 0
    var index = 0
    while offset < sealed.count {
      let end = min(sealed.count, offset + sizes[index % sizes.count])
      try sealed[offset..<end].withUnsafeBytes { try opener.update($0, emit: { plain += $0 }) }
      (offset, index) = (end, index + 1)
    }
    let summary = try opener.finish(emit: { plain += $0 })
    return (plain, summary)
  }

  func testAnySplitOpensToThePlaintextWithTheKeyAndCounts() throws {
    for size in [0, 1, 16_383, 16_384, 16_385, 70_000] {
      let plain = bytes(size)
      let blob = try sealed(plain)
      for pieces in [[1], [7, 13], [12, 1, 16_400], [blob.count]] {
        let (back, summary) = try opened(blob, pieces: pieces)
        XCTAssertEqual(back, plain, "size \(size), pieces \(pieces)")
        XCTAssertEqual(summary.keyID, keyring.primaryID)
        XCTAssertEqual(summary.plaintextByteCount, UInt64(size))
        XCTAssertEqual(summary.storedByteCount, UInt64(blob.count))
        XCTAssertTrue(summary.isSealed)
      }
    }
  }

  func testAPlainInputIsRefusedAtTheFirstByteThatIsNotTheMagic() throws {
    let opener = Attachment.StreamOpener(keyring: keyring, record: "r")
    var emitted = 0
    try Attachment.magic[..<3].withUnsafeBytes { try opener.update($0, emit: { emitted += $0.count }) }
    XCTAssertThrowsError(try [UInt8(0)].withUnsafeBytes { try opener.update($0, emit: { emitted += $0.count }) }) {
      XCTAssertEqual(($0 as? AttachmentError)?.code, "not_sealed")
    }
    // The failure stays: finishing reports it again, and nothing came out.
    XCTAssertThrowsError(try opener.finish(emit: { emitted += $0.count })) {
      XCTAssertEqual(($0 as? AttachmentError)?.code, "not_sealed")
    }
    XCTAssertEqual(emitted, 0)
  }

  func testAWrapperCutShortAnotherVersionAnUnknownKeyOrAnotherRecordIsRefused() throws {
    let blob = try sealed(bytes(40_000))
    XCTAssertThrowsError(try opened(Array(blob[..<10]), pieces: [3])) {
      XCTAssertEqual($0 as? AttachmentError, .truncatedWrapper(byteCount: 10))
    }
    var version = blob
    version[8] = 2
    XCTAssertThrowsError(try opened(version, pieces: [5])) {
      XCTAssertEqual($0 as? AttachmentError, .unsupportedVersion(2))
    }
    let other = try Keyring.generate()
    let foreign = Attachment.StreamOpener(keyring: other, record: "attachment/1")
    XCTAssertThrowsError(try blob.withUnsafeBytes { try foreign.update($0, emit: { _ in }) }) {
      XCTAssertEqual(($0 as? AttachmentError)?.code, "unknown_key_id")
    }
    XCTAssertThrowsError(try opened(blob, pieces: [4096], record: "attachment/2")) {
      XCTAssertEqual(($0 as? AttachmentError)?.code, "commitment_mismatch")
    }
  }

  func testAnAlteredOrCutChunkEmitsOnlyTheVerifiedPrefixAndFinishRefuses() throws {
    let plain = bytes(50_000)
    let blob = try sealed(plain)
    var altered = blob
    altered[blob.count - 100] ^= 1
    let opener = Attachment.StreamOpener(keyring: keyring, record: "attachment/1")
    var out: [UInt8] = []
    try altered.withUnsafeBytes { try opener.update($0, emit: { out += $0 }) }
    XCTAssertThrowsError(try opener.finish(emit: { out += $0 })) { XCTAssertTrue($0 is AttachmentError) }
    XCTAssertEqual(out, Array(plain[..<out.count]), "only verified plaintext came out")
    XCTAssertLessThan(out.count, plain.count)
    XCTAssertThrowsError(try opened(Array(blob.dropLast(1)), pieces: [1000])) { XCTAssertTrue($0 is AttachmentError) }
    XCTAssertThrowsError(try opened(blob + [0], pieces: [1000])) { XCTAssertTrue($0 is AttachmentError) }
  }

  func testTheErrorsOfEmitPassThrough() throws {
    struct Stop: Error {}
    let blob = try sealed(bytes(20_000))
    let opener = Attachment.StreamOpener(keyring: keyring, record: "attachment/1")
    XCTAssertThrowsError(try blob.withUnsafeBytes { try opener.update($0, emit: { _ in throw Stop() }) }) {
      XCTAssertTrue($0 is Stop)
    }
  }
}
