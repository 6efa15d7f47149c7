import XCTest

@testable import TaskCrypto

/// Every way to break a sealed message is detected and named, by the
/// streaming opener and by the random-access opener alike.
final class ChunkedTamperTests: XCTestCase {
  var key: SymmetricKey!
  var message: [UInt8] = []
  /// Three full chunks and a final chunk of 100 bytes.
  var sealed: [UInt8] = []

  override func setUpWithError() throws {
    key = try Chunked.key()
    message = Chunked.message(3 * Chunked.chunk + 100)
    sealed = try Chunked.seal(message, key: key)
  }

  /// Offset of sealed chunk `index`.
  func at(_ index: Int) -> Int { Chunked.header + index * Chunked.sealedChunk }

  func assertBoth(
    _ bytes: [UInt8], _ expected: TaskCryptoError, context: String = "ctx", released: Int = 0,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    let (out, error) = Chunked.stream(bytes, key: key, context: context)
    XCTAssertEqual(error, expected, "stream", file: file, line: line)
    XCTAssertLessThanOrEqual(out.count, released, "stream released too much", file: file, line: line)
    XCTAssertEqual(out, Array(message[..<out.count]), "stream released other bytes", file: file, line: line)
    XCTAssertEqual(
      Chunked.randomAccessError(bytes, key: key, context: context), expected, "random access", file: file, line: line)
  }

  func testHeaderTruncation() {
    assertBoth([], .truncatedHeader(byteCount: 0))
    assertBoth(Array(sealed[..<24]), .truncatedHeader(byteCount: 24))
    assertBoth(Array(sealed[..<55]), .truncatedHeader(byteCount: 55))
  }

  func testWrongKeyWrongContextAndAlteredHeaderFailTheCommitment() throws {
    let other = try Chunked.key()
    let (out, error) = Chunked.stream(sealed, key: other)
    XCTAssertEqual(error, .commitmentMismatch)
    XCTAssertEqual(out, [])
    XCTAssertEqual(Chunked.randomAccessError(sealed, key: other), .commitmentMismatch)
    assertBoth(sealed, .commitmentMismatch, context: "ctx2")
    for offset in [0, 23, 24, 55] {
      var bytes = sealed
      bytes[offset] ^= 0x01
      assertBoth(bytes, .commitmentMismatch)
    }
  }

  func testTruncationAtAChunkBoundaryIsAMissingFinalChunk() {
    assertBoth(Array(sealed[..<at(0)]), .missingFinalChunk(chunkIndex: 0))
    assertBoth(Array(sealed[..<at(2)]), .missingFinalChunk(chunkIndex: 2), released: 2 * Chunked.chunk)
  }

  func testTruncationInsideATagIsATruncatedChunk() {
    assertBoth(
      Array(sealed[..<(at(3) + 15)]), .truncatedChunk(chunkIndex: 3, byteCount: 15), released: 3 * Chunked.chunk)
    assertBoth(Array(sealed[..<(at(1) + 1)]), .truncatedChunk(chunkIndex: 1, byteCount: 1), released: Chunked.chunk)
  }

  func testTruncationInsideAChunkFailsTheFinalChunk() {
    assertBoth(
      Array(sealed[..<(sealed.count - 1)]), .finalChunkAuthenticationFailed(chunkIndex: 3), released: 3 * Chunked.chunk)
    assertBoth(
      Array(sealed[..<(at(1) + 5000)]), .finalChunkAuthenticationFailed(chunkIndex: 1), released: Chunked.chunk)
  }

  func testAFlippedBitInAnyChunkOrTagIsNamedByIndex() {
    for (offset, index) in [(at(0), 0), (at(1) + 16_399, 1), (at(2) + 9000, 2)] {
      var bytes = sealed
      bytes[offset] ^= 0x80
      assertBoth(bytes, .chunkAuthenticationFailed(chunkIndex: UInt64(index)), released: index * Chunked.chunk)
    }
    var bytes = sealed
    bytes[sealed.count - 1] ^= 0x01
    assertBoth(bytes, .finalChunkAuthenticationFailed(chunkIndex: 3), released: 3 * Chunked.chunk)
  }

  func testAppendedBytesAreTrailingData() throws {
    assertBoth(sealed + [0], .trailingData(afterChunkIndex: 3), released: 3 * Chunked.chunk)
    assertBoth(
      sealed + [UInt8](repeating: 9, count: 40), .trailingData(afterChunkIndex: 3), released: 3 * Chunked.chunk)
    // A whole further chunk appended (a copy of chunk 1).
    let appended = sealed + Array(sealed[at(1)..<at(2)])
    assertBoth(appended, .trailingData(afterChunkIndex: 3), released: 3 * Chunked.chunk)
    // Appended after an empty final chunk.
    let exact = try Chunked.seal(Chunked.message(Chunked.chunk), key: key)
    let (_, error) = Chunked.stream(exact + [1, 2, 3], key: key)
    XCTAssertEqual(error, .trailingData(afterChunkIndex: 1))
  }

  func testReorderedAndDuplicatedChunksAreOutOfPlace() {
    let c0 = Array(sealed[at(0)..<at(1)])
    let c1 = Array(sealed[at(1)..<at(2)])
    let c2 = Array(sealed[at(2)..<at(3)])
    let head = Array(sealed[..<at(0)])
    let tail = Array(sealed[at(3)...])
    assertBoth(head + c1 + c0 + c2 + tail, .chunkOutOfPlace(chunkIndex: 0, sealedAt: 1))
    assertBoth(head + c0 + c0 + c2 + tail, .chunkOutOfPlace(chunkIndex: 1, sealedAt: 0), released: Chunked.chunk)
    assertBoth(head + c0 + c1 + c1 + tail, .chunkOutOfPlace(chunkIndex: 2, sealedAt: 1), released: 2 * Chunked.chunk)
    // A chunk removed: the stream meets chunk 2 at position 1; random
    // access meets the final chunk (sealed at 3) at position 2.
    let (_, error) = Chunked.stream(head + c0 + c2 + tail, key: key)
    XCTAssertEqual(error, .chunkOutOfPlace(chunkIndex: 1, sealedAt: 2))
    XCTAssertEqual(
      Chunked.randomAccessError(head + c0 + c2 + tail, key: key), .chunkOutOfPlace(chunkIndex: 2, sealedAt: 3))
  }

  func testAChunkSplicedFromAnotherMessageUnderTheSameKeyFails() throws {
    let other = try Chunked.seal(message, key: key)
    var bytes = sealed
    bytes.replaceSubrange(at(1)..<at(2), with: other[at(1)..<at(2)])
    assertBoth(bytes, .chunkAuthenticationFailed(chunkIndex: 1), released: Chunked.chunk)
  }

  /// A whole chunk's failure waits for the input's length (step 7 before
  /// step 8, issue 22): `update` releases nothing from the failed chunk
  /// on, `finish` reports the failure, and every later call repeats it.
  func testAFailedStreamKeepsFailing() throws {
    var bytes = sealed
    bytes[at(1)] ^= 1
    let opener = try ChunkedEncryption.Opener(key: key, context: Array("ctx".utf8))
    var released = 0
    try opener.update(bytes) { released += $0.count }
    XCTAssertEqual(released, Chunked.chunk)
    XCTAssertThrowsError(try opener.finish { released += $0.count }) {
      XCTAssertEqual($0 as? TaskCryptoError, .chunkAuthenticationFailed(chunkIndex: 1))
    }
    XCTAssertThrowsError(try opener.update([UInt8]()) { _ in }) {
      XCTAssertEqual($0 as? TaskCryptoError, .chunkAuthenticationFailed(chunkIndex: 1))
    }
    XCTAssertThrowsError(try opener.finish { _ in }) {
      XCTAssertEqual($0 as? TaskCryptoError, .chunkAuthenticationFailed(chunkIndex: 1))
    }
    XCTAssertEqual(released, Chunked.chunk)
  }

  /// The length comes first (step 7): a file padded to a whole number of
  /// chunks is `missingFinalChunk` for the stream as for random access,
  /// although its last whole chunk fails (issue 22, item 13: the stream
  /// said `trailingData`).
  func testAFilePaddedToWholeChunksIsMissingItsFinalChunkForBothReaders() throws {
    let finalLength = (sealed.count - ChunkedEncryption.headerByteCount) % ChunkedEncryption.sealedChunkByteCount
    let padded = sealed + [UInt8](repeating: 0xa5, count: ChunkedEncryption.sealedChunkByteCount - finalLength)
    let chunks = UInt64((padded.count - ChunkedEncryption.headerByteCount) / ChunkedEncryption.sealedChunkByteCount)
    XCTAssertEqual(Chunked.stream(padded, key: key).1, .missingFinalChunk(chunkIndex: chunks))
    XCTAssertEqual(Chunked.randomAccessError(padded, key: key), .missingFinalChunk(chunkIndex: chunks))
    // Whole chunks appended after the real end: trailing data for both.
    for count in 1...3 {
      let extended = sealed + [UInt8](repeating: 0xa5, count: count * ChunkedEncryption.sealedChunkByteCount)
      guard case .trailingData? = Chunked.stream(extended, key: key).1 else {
        return XCTFail("stream, \(count) chunks appended")
      }
      guard case .trailingData? = Chunked.randomAccessError(extended, key: key) else {
        return XCTFail("random access, \(count) chunks appended")
      }
    }
  }

  func testRangeReadsAcrossBoundariesAndAtTheEnd() throws {
    let reader = try Chunked.randomAccess(sealed, key: key)
    let size = UInt64(message.count)
    XCTAssertEqual(reader.plaintextByteCount, size)
    for (offset, count) in [
      (0, 1), (16_383, 2), (16_380, 16_400), (10, 3 * Chunked.chunk + 80), (Int(size) - 100, 100),
      (Int(size) - 1, 1), (Int(size), 0), (3 * Chunked.chunk, 100), (2 * Chunked.chunk - 1, 1),
    ] {
      XCTAssertEqual(try reader.read(offset: UInt64(offset), count: count), Array(message[offset..<(offset + count)]))
    }
    XCTAssertThrowsError(try reader.read(offset: size, count: 1)) {
      XCTAssertEqual($0 as? TaskCryptoError, .rangeOutOfBounds(offset: size, length: 1, messageByteCount: size))
    }
    XCTAssertThrowsError(try reader.read(offset: UInt64.max, count: 2)) {
      XCTAssertEqual($0 as? TaskCryptoError, .rangeOutOfBounds(offset: .max, length: 2, messageByteCount: size))
    }
  }

  func testARangeReadDecryptsOnlyTheChunksItTouches() throws {
    var bytes = sealed
    bytes[at(0) + 5] ^= 1  // chunk 0 altered; the final chunk is intact
    let reader = try Chunked.randomAccess(bytes, key: key)
    XCTAssertEqual(try reader.read(offset: 20_000, count: 100), Array(message[20_000..<20_100]))
    var buffer = [UInt8](repeating: 0xee, count: 10)
    XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try reader.read(offset: 0, into: $0) }) {
      XCTAssertEqual($0 as? TaskCryptoError, .chunkAuthenticationFailed(chunkIndex: 0))
    }
    XCTAssertEqual(buffer, [UInt8](repeating: 0, count: 10), "a failed read leaves no plaintext")
  }
}
