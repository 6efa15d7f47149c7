import FoundationEssentials

/// C2SP chunked encryption (c2sp.org/chunked-encryption), in its
/// Cobblestone-256 instantiation: HKDF-SHA-512 and AES-256-GCM.
///
/// A message of any length up to 4 PiB - 1 is sealed as
///
///     salt (24) || commitment (32) || chunk 0 || chunk 1 || … || final chunk
///
/// where HKDF-Expand(PRK = input key, info = "c2sp.org/chunked-encryption@v1+"
/// || "AEAD_AES_256_GCM" || 0x00 || salt || context) gives the AES key (32),
/// the base nonce (12) and the commitment (32). Each chunk is 16 KiB of
/// plaintext sealed with AES-256-GCM under the base nonce XOR its index and
/// an empty AAD; the final chunk is always shorter than 16 KiB (possibly
/// empty), so the length is authenticated and truncation is detected.
///
/// Guarantees: a fresh random salt per message gives a fresh key and base
/// nonce, so a caller never manages nonces; the commitment is checked before
/// any chunk is decrypted, so a wrong key or context fails at once; no
/// plaintext of a chunk is released before that chunk's tag verified.
///
/// Use `Sealer` and `Opener` to stream with constant memory, and
/// `RandomAccessOpener` to read any byte range by decrypting only the chunks
/// it touches.
public enum ChunkedEncryption {
  /// Plaintext bytes in every chunk but the last: 16 KiB.
  public static let chunkByteCount = 16_384
  /// Bytes of a sealed full chunk: 16 KiB plus the 16-byte tag.
  public static let sealedChunkByteCount = chunkByteCount + AES.GCM.tagByteCount
  /// Bytes of the random salt: 24.
  public static let saltByteCount = 24
  /// Bytes of the key commitment: 32.
  public static let commitmentByteCount = 32
  /// Bytes before the first chunk: salt and commitment, 56.
  public static let headerByteCount = saltByteCount + commitmentByteCount
  /// The standard's chunk limit, 2^38: the counter must stay below it.
  public static let maximumChunkCount: UInt64 = 1 << 38
  /// The name of the AEAD in the HKDF info, from the IANA AEAD registry.
  /// Package seam: the vectors target runs only groups of this AEAD.
  package static let aeadName = "AEAD_AES_256_GCM"
  /// The HKDF info prefix of version 1 of the standard.
  static let infoPrefix = "c2sp.org/chunked-encryption@v1+"

  /// The sealed size of a message of `plaintextByteCount` bytes: the
  /// header, one 16 400-byte chunk per full 16 KiB, and the final chunk.
  ///
  /// - Throws: `TaskCryptoError.tooLarge` at or above 4 PiB.
  public static func sealedByteCount(plaintextByteCount: UInt64) throws -> UInt64 {
    let chunks = plaintextByteCount / UInt64(chunkByteCount)
    guard chunks < maximumChunkCount else {
      throw TaskCryptoError.tooLarge(
        byteCount: Int(clamping: plaintextByteCount), limit: Int(maximumChunkCount) * chunkByteCount - 1)
    }
    return UInt64(headerByteCount) + plaintextByteCount + (chunks + 1) * UInt64(AES.GCM.tagByteCount)
  }

  /// The plaintext size of a sealed message of `sealedByteCount` bytes
  /// after the header, checked as the standard requires: the bytes after
  /// the last full chunk must hold at least a tag.
  ///
  /// - Throws: `TaskCryptoError.missingFinalChunk` when they are none,
  ///   `.truncatedChunk` when fewer than 16, `.tooLarge` past 2^38 chunks.
  static func plaintextByteCount(payloadByteCount: UInt64) throws -> UInt64 {
    let fullChunks = payloadByteCount / UInt64(sealedChunkByteCount)
    let rest = Int(payloadByteCount % UInt64(sealedChunkByteCount))
    guard fullChunks < maximumChunkCount else {
      throw TaskCryptoError.tooLarge(byteCount: Int(clamping: payloadByteCount), limit: Int.max)
    }
    if rest == 0 { throw TaskCryptoError.missingFinalChunk(chunkIndex: fullChunks) }
    if rest < AES.GCM.tagByteCount { throw TaskCryptoError.truncatedChunk(chunkIndex: fullChunks, byteCount: rest) }
    return fullChunks * UInt64(chunkByteCount) + UInt64(rest - AES.GCM.tagByteCount)
  }

  /// The per-message key, base nonce and commitment (the "key schedule").
  ///
  /// The derived bytes live in an ordinary buffer wiped when this goes
  /// away, not in locked memory: the AES key schedule that OpenSSL expands
  /// from them lives in its (unlocked, cleansed on free) cipher context
  /// for the whole message anyway, and a locked allocation per file would
  /// cost more than sealing a small file (SECURITY.md, "Secrets in memory").
  final class MessageKeys {
    private let derived: UnsafeMutableRawBufferPointer
    let baseNonce: [UInt8]
    let commitment: [UInt8]

    /// HKDF-Expand(input key, info, 32 + 12 + 32) split in that order.
    init<Context: ContiguousBytes>(inputKey: SymmetricKey, salt: [UInt8], context: Context) {
      precondition(salt.count == saltByteCount)
      var info = Array((infoPrefix + aeadName).utf8)
      info.append(0)
      info += salt
      context.withUnsafeBytes { info += $0 }
      let keyCount = SymmetricKey.byteCount
      let nonceCount = AES.GCM.nonceByteCount
      let derived = UnsafeMutableRawBufferPointer.allocate(
        byteCount: keyCount + nonceCount + commitmentByteCount, alignment: 16)
      inputKey.withUnsafeBytes { HKDFSHA512.expand(rawKey: $0, info: info, into: derived) }
      self.derived = derived
      baseNonce = Array(derived[keyCount..<(keyCount + nonceCount)])
      commitment = Array(derived[(keyCount + nonceCount)...])
    }

    /// Raw mode: a key and base nonce from a higher-level protocol; no
    /// salt and no commitment.
    init(rawKey: SymmetricKey, baseNonce: [UInt8]) {
      precondition(baseNonce.count == AES.GCM.nonceByteCount)
      let derived = UnsafeMutableRawBufferPointer.allocate(byteCount: SymmetricKey.byteCount, alignment: 16)
      rawKey.withUnsafeBytes { derived.copyMemory(from: $0) }
      self.derived = derived
      self.baseNonce = baseNonce
      self.commitment = []
    }

    deinit {
      wipe(derived)
      derived.deallocate()
    }

    /// The derived AES key, for tests.
    var key: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: derived[..<SymmetricKey.byteCount]) }

    func cipher(encrypting: Bool) throws -> ChunkCipher {
      try ChunkCipher(key: key, baseNonce: baseNonce, encrypting: encrypting)
    }
  }
}
