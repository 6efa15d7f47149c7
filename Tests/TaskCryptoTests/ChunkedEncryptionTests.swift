import XCTest

@testable import TaskCrypto

/// Helpers shared by the chunked-encryption tests.
enum Chunked {
  static let chunk = ChunkedEncryption.chunkByteCount
  static let sealedChunk = ChunkedEncryption.sealedChunkByteCount
  static let header = ChunkedEncryption.headerByteCount

  static func key() throws -> SymmetricKey { try SymmetricKey.generate() }

  static func message(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
  }

  static func seal(_ message: [UInt8], key: SymmetricKey, context: String = "ctx", piece: Int = 1000) throws -> [UInt8]
  {
    let sealer = try ChunkedEncryption.Sealer(key: key, context: Array(context.utf8))
    var out = [UInt8]()
    var offset = 0
    repeat {
      let end = min(offset + piece, message.count)
      try sealer.update(message[offset..<end]) { out += $0 }
      offset = end
    } while offset < message.count
    try sealer.finish { out += $0 }
    return out
  }

  /// Opens through the streaming opener; returns what it released and the error.
  static func stream(_ sealed: [UInt8], key: SymmetricKey, context: String = "ctx", piece: Int = 777)
    -> ([UInt8], TaskCryptoError?)
  {
    var out = [UInt8]()
    do {
      let opener = try ChunkedEncryption.Opener(key: key, context: Array(context.utf8))
      var offset = 0
      while offset < sealed.count {
        let end = min(offset + piece, sealed.count)
        try opener.update(sealed[offset..<end]) { out += $0 }
        offset = end
      }
      try opener.finish { out += $0 }
      return (out, nil)
    } catch {
      return (out, error as? TaskCryptoError)
    }
  }

  static func randomAccess(_ sealed: [UInt8], key: SymmetricKey, context: String = "ctx") throws
    -> ChunkedEncryption.RandomAccessOpener
  {
    try ChunkedEncryption.RandomAccessOpener(
      key: key, context: Array(context.utf8), sealedByteCount: UInt64(sealed.count)
    ) { offset, buffer in
      sealed[Int(offset)..<(Int(offset) + buffer.count)].withUnsafeBytes { buffer.copyMemory(from: $0) }
    }
  }

  /// The error of opening `sealed` at random access, or nil.
  static func randomAccessError(_ sealed: [UInt8], key: SymmetricKey, context: String = "ctx") -> TaskCryptoError? {
    do {
      let opener = try randomAccess(sealed, key: key, context: context)
      _ = try opener.read(offset: 0, count: Int(opener.plaintextByteCount))
      return nil
    } catch {
      return error as? TaskCryptoError
    }
  }
}

final class ChunkedEncryptionTests: XCTestCase {
  func testRoundTripAtEveryBoundarySize() throws {
    let key = try Chunked.key()
    for size in [0, 1, Chunked.chunk - 1, Chunked.chunk, Chunked.chunk + 1, 2 * Chunked.chunk, 5 * Chunked.chunk + 7] {
      let message = Chunked.message(size)
      for piece in [1, 4096, Chunked.chunk, 100_000] where piece <= max(size, 1) * 2 {
        let sealed = try Chunked.seal(message, key: key, piece: piece)
        XCTAssertEqual(UInt64(sealed.count), try ChunkedEncryption.sealedByteCount(plaintextByteCount: UInt64(size)))
        let (opened, error) = Chunked.stream(sealed, key: key, piece: piece == 1 ? 1 : 5000)
        XCTAssertNil(error, "size \(size)")
        XCTAssertEqual(opened, message, "size \(size) piece \(piece)")
        let reader = try Chunked.randomAccess(sealed, key: key)
        XCTAssertEqual(reader.plaintextByteCount, UInt64(size))
        XCTAssertEqual(try reader.read(offset: 0, count: size), message)
      }
    }
  }

  func testTheFinalChunkIsAlwaysShorterThanAChunk() throws {
    let key = try Chunked.key()
    // 16 KiB is one full chunk and an empty final chunk: header + 16400 + 16.
    XCTAssertEqual(try Chunked.seal(Chunked.message(Chunked.chunk), key: key).count, 56 + 16_400 + 16)
    XCTAssertEqual(try Chunked.seal([], key: key).count, 56 + 16)
  }

  func testTwoSealsOfOneMessageDifferInSaltAndEveryByteAfter() throws {
    let key = try Chunked.key()
    let message = Chunked.message(100)
    let first = try Chunked.seal(message, key: key)
    let second = try Chunked.seal(message, key: key)
    XCTAssertNotEqual(first[..<24], second[..<24])
    XCTAssertNotEqual(first[56...], second[56...])
  }

  /// The nonce of chunk i is the base nonce XOR i, big-endian, computed here
  /// independently and checked against plain AES-GCM at indices past 2^8,
  /// 2^32 (a 64 TiB message) and up to the 2^38 limit.
  func testChunkNoncesAreTheBaseNonceXorTheIndexPastThirtyTwoBits() throws {
    let key = try Chunked.key()
    let salt = [UInt8](repeating: 0x5a, count: 24)
    let keys = ChunkedEncryption.MessageKeys(inputKey: key, salt: salt, context: Array("ctx".utf8))
    let aesKey = try SymmetricKey(copying: keys.key)
    let plaintext = Chunked.message(Chunked.chunk)
    for index: UInt64 in [0, 255, 256, (1 << 32) - 1, 1 << 32, (1 << 32) + 0x1_0203, (1 << 38) - 2] {
      let sealer = try ChunkedEncryption.Sealer(key: key, context: Array("ctx".utf8), salt: salt)
      sealer.chunkIndex = index
      var out = [UInt8]()
      try sealer.update(plaintext) { out += $0 }
      try sealer.finish { out += $0 }
      var nonce = keys.baseNonce
      for byte in 0..<8 { nonce[11 - byte] ^= UInt8((index >> (8 * UInt64(byte))) & 0xff) }
      let expected = try AES.GCM.seal(plaintext, using: aesKey, nonce: nonce, authenticating: [UInt8]())
      XCTAssertEqual(Array(out[56..<(56 + Chunked.sealedChunk)]), expected.ciphertext + expected.tag, "index \(index)")

      let opener = try ChunkedEncryption.Opener(key: key, context: Array("ctx".utf8))
      try opener.update(out[..<56]) { _ in }
      opener.chunkIndex = index
      var opened = [UInt8]()
      try opener.update(out[56...]) { opened += $0 }
      try opener.finish { opened += $0 }
      XCTAssertEqual(opened, plaintext)
    }
  }

  func testTheCounterStopsBeforeTwoToTheThirtyEight() throws {
    let key = try Chunked.key()
    let sealer = try ChunkedEncryption.Sealer(key: key, context: [UInt8]())
    sealer.chunkIndex = (1 << 38) - 1
    XCTAssertThrowsError(try sealer.update(Chunked.message(Chunked.chunk)) { _ in }) {
      guard case .tooLarge = $0 as? TaskCryptoError else { return XCTFail("\($0)") }
    }
    let limit: UInt64 = (1 << 38) * 16_384
    XCTAssertThrowsError(try ChunkedEncryption.sealedByteCount(plaintextByteCount: limit))
    let tags: UInt64 = (1 << 38) * 16
    XCTAssertEqual(try ChunkedEncryption.sealedByteCount(plaintextByteCount: limit - 1), 56 + limit - 1 + tags)
  }

  /// More than 2^32 bytes through the streaming API, sealed and opened in
  /// memory without touching the disk: every 4 KiB of plaintext carries its
  /// own offset, so a chunk dropped, repeated or reordered would show.
  func testAStreamOfMoreThanFourGiBRoundTripsWithoutTheDisk() throws {
    let key = try Chunked.key()
    let total: UInt64 = (1 << 32) + UInt64(Chunked.chunk) + 5
    let sealer = try ChunkedEncryption.Sealer(key: key, context: Array("big".utf8))
    let opener = try ChunkedEncryption.Opener(key: key, context: Array("big".utf8))
    var sealedCount: UInt64 = 0
    var openedCount: UInt64 = 0
    var mismatches = 0
    let check: (UnsafeRawBufferPointer) -> Void = { plain in
      var position = 0
      while position < plain.count {
        let offset = openedCount + UInt64(position)
        if offset % 4096 == 0, plain.count - position >= 8 {
          if plain.loadUnaligned(fromByteOffset: position, as: UInt64.self) != offset { mismatches += 1 }
          position += 4096
        } else {
          position += Int(4096 - offset % 4096)
        }
      }
      openedCount += UInt64(plain.count)
    }
    let forward: (UnsafeRawBufferPointer) throws -> Void = { sealed in
      sealedCount += UInt64(sealed.count)
      try opener.update(sealed, emit: check)
    }
    var buffer = [UInt8](repeating: 0xa5, count: 1 << 20)
    var produced: UInt64 = 0
    while produced < total {
      let count = Int(min(UInt64(buffer.count), total - produced))
      buffer.withUnsafeMutableBytes { bytes in
        var stamp = 0
        while stamp + 8 <= count {
          bytes.storeBytes(of: produced + UInt64(stamp), toByteOffset: stamp, as: UInt64.self)
          stamp += 4096
        }
      }
      try buffer.withUnsafeBytes { try sealer.update(UnsafeRawBufferPointer(rebasing: $0[..<count]), emit: forward) }
      produced += UInt64(count)
    }
    try sealer.finish(emit: forward)
    try opener.finish(emit: check)
    XCTAssertEqual(sealedCount, try ChunkedEncryption.sealedByteCount(plaintextByteCount: total))
    XCTAssertEqual(openedCount, total)
    XCTAssertEqual(opener.chunkIndex, total / UInt64(Chunked.chunk))
    XCTAssertEqual(mismatches, 0)
  }
}
