/// Names why a chunk failed to authenticate, after it failed. Security does
/// not depend on it: the message is already refused. It only turns one
/// "did not authenticate" into the cause a person can act on, by trying the
/// chunk's bytes at other positions and lengths. Every trial decrypts into
/// scratch memory that is wiped; nothing is released.
enum ChunkDiagnosis {
  /// How far from its position a chunk is looked for (reorder, duplicate).
  static let searchWindow: UInt64 = 1024

  /// The cause for a chunk that failed at `index`: its start is the real
  /// final chunk followed by appended bytes (`trailingData`), or it is a
  /// chunk of the same message sealed at another index (`chunkOutOfPlace`:
  /// reordered, duplicated, or chunks removed before it), or else it was
  /// altered, spliced or cut (`chunkAuthenticationFailed` for a full chunk,
  /// `finalChunkAuthenticationFailed` for the short final one).
  ///
  /// - Parameter chunkCount: the message's chunk count when known (random
  ///   access), which bounds the search.
  static func cause(
    of sealed: UnsafeRawBufferPointer, index: UInt64, isFinal: Bool, chunkCount: UInt64?, cipher: ChunkCipher
  ) -> TaskCryptoError {
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: sealed.count, alignment: 16)
    defer {
      wipe(scratch)
      scratch.deallocate()
    }
    if endsEarly(sealed, index: index, cipher: cipher, scratch: scratch) {
      return .trailingData(afterChunkIndex: index)
    }
    let limit = isFinal ? nil : chunkCount
    if let other = position(of: sealed, near: index, below: limit, cipher: cipher, scratch: scratch) {
      return .chunkOutOfPlace(chunkIndex: index, sealedAt: other)
    }
    return isFinal ? .finalChunkAuthenticationFailed(chunkIndex: index) : .chunkAuthenticationFailed(chunkIndex: index)
  }

  /// The other index, within `searchWindow` of `index` (and below
  /// `limit` when known), at which `sealed` authenticates.
  static func position(
    of sealed: UnsafeRawBufferPointer, near index: UInt64, below limit: UInt64?, cipher: ChunkCipher,
    scratch: UnsafeMutableRawBufferPointer
  ) -> UInt64? {
    let lowest = index > searchWindow ? index - searchWindow : 0
    let end = Swift.min(index + searchWindow + 1, limit ?? .max, ChunkedEncryption.maximumChunkCount)
    var other = lowest
    while other < end {
      if other != index && cipher.authenticates(sealed, index: other, scratch: scratch) { return other }
      other += 1
    }
    return nil
  }

  /// Whether a proper prefix of `sealed` authenticates as the final chunk
  /// at `index` (so the bytes after that prefix were appended).
  static func endsEarly(
    _ sealed: UnsafeRawBufferPointer, index: UInt64, cipher: ChunkCipher, scratch: UnsafeMutableRawBufferPointer
  ) -> Bool {
    let longest = Swift.min(sealed.count - 1, ChunkedEncryption.sealedChunkByteCount - 1)
    guard longest >= AES.GCM.tagByteCount else { return false }
    for length in AES.GCM.tagByteCount...longest
    where cipher.authenticates(UnsafeRawBufferPointer(rebasing: sealed[0..<length]), index: index, scratch: scratch) {
      return true
    }
    return false
  }
}
