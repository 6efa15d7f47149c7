import CSodium
import FoundationEssentials

/// HKDF (RFC 5869) with HMAC-SHA-512, through libsodium's HMAC.
///
/// TaskKey uses only the Expand step: the chunked encryption of attachments
/// (c2sp.org/chunked-encryption) takes its input key as the pseudorandom key,
/// as NIST SP 800-108 allows for a key that is already uniformly random.
public enum HKDFSHA512 {
  /// The output size of HMAC-SHA-512 in bytes: 64.
  public static let hashByteCount = 64
  /// The most bytes HKDF-Expand can produce: 255 blocks of 64 bytes.
  public static let maximumOutputByteCount = 255 * hashByteCount

  /// HKDF-Expand(PRK, info, L) into locked memory.
  ///
  /// - Parameters:
  ///   - key: the pseudorandom key (a 256-bit key in TaskKey).
  ///   - info: the context and application-specific information.
  ///   - outputByteCount: L, from 0 to `maximumOutputByteCount`.
  /// - Returns: L bytes of output keying material, in locked memory.
  /// - Throws: `TaskCryptoError.tooLarge` when L is above the RFC's limit,
  ///   `.resourceUnavailable` when locked memory cannot be had.
  public static func expand<Info: ContiguousBytes>(
    pseudoRandomKey key: SymmetricKey,
    info: Info,
    outputByteCount: Int
  ) throws -> SecureBytes {
    try key.withUnsafeBytes { try expand(rawKey: $0, info: info, outputByteCount: outputByteCount) }
  }

  /// The RFC 5869 §2.3 loop into locked memory. Takes a key of any length,
  /// for the RFC and Wycheproof test vectors.
  static func expand<Info: ContiguousBytes>(
    rawKey: UnsafeRawBufferPointer,
    info: Info,
    outputByteCount: Int
  ) throws -> SecureBytes {
    guard outputByteCount >= 0, outputByteCount <= maximumOutputByteCount else {
      throw TaskCryptoError.tooLarge(byteCount: outputByteCount, limit: maximumOutputByteCount)
    }
    let output = try SecureBytes(zeroedCount: outputByteCount)
    output.withUnsafeMutableBytes { expand(rawKey: rawKey, info: info, into: $0) }
    return output
  }

  /// T(i) = HMAC(PRK, T(i-1) || info || i), written to `output` (at most
  /// 255 × 64 bytes). The HMAC state and T(i) live on the stack and are
  /// wiped before returning. The caller owns (and wipes) `output`.
  static func expand<Info: ContiguousBytes>(
    rawKey: UnsafeRawBufferPointer, info: Info, into output: UnsafeMutableRawBufferPointer
  ) {
    precondition(output.count <= maximumOutputByteCount)
    ensureSodium()
    var state = crypto_auth_hmacsha512_state()
    var previous = [UInt8](repeating: 0, count: hashByteCount)
    defer {
      withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) }
      previous.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
    }
    var spare: UInt8 = 0
    var written = 0
    var counter: UInt8 = 1
    while written < output.count {
      withUnsafePointer(to: &spare) { fallback in
        let keyBase = rawKey.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? fallback
        // crypto_auth_hmacsha512_init returns 0 for every key length.
        _ = crypto_auth_hmacsha512_init(&state, keyBase, rawKey.count)
      }
      if counter > 1 { _ = crypto_auth_hmacsha512_update(&state, previous, UInt64(hashByteCount)) }
      info.withUnsafeBytes { infoBytes in
        guard let base = infoBytes.baseAddress, infoBytes.count > 0 else { return }
        _ = crypto_auth_hmacsha512_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(infoBytes.count))
      }
      _ = crypto_auth_hmacsha512_update(&state, &counter, 1)
      _ = crypto_auth_hmacsha512_final(&state, &previous)
      let take = Swift.min(hashByteCount, output.count - written)
      previous.withUnsafeBytes {
        output.baseAddress!.advanced(by: written).copyMemory(from: $0.baseAddress!, byteCount: take)
      }
      written += take
      counter &+= 1
    }
  }
}
