import CSodium
import FoundationEssentials

extension HKDFSHA512 {
  /// The full HKDF of RFC 5869 with HMAC-SHA-512: Extract, then Expand.
  ///
  /// TaskKey derives its own keys with Expand alone (the input is already a
  /// uniformly random 256-bit key); this entry point exists so the Expand
  /// code TaskKey uses can be checked against the published RFC 5869-style
  /// vectors (Project Wycheproof's `hkdf_sha512_test.json`), which all run
  /// Extract first.
  ///
  /// - Parameters:
  ///   - inputKeyMaterial: IKM, any length.
  ///   - salt: any length; empty means 64 zero bytes (RFC 5869 §2.2).
  ///   - info: the context and application-specific information.
  ///   - outputByteCount: L, from 0 to `maximumOutputByteCount`.
  /// - Returns: L bytes of output keying material, in locked memory.
  /// - Throws: `TaskCryptoError.tooLarge` when L is above the RFC's limit
  ///   (checked before any work), `.resourceUnavailable` when locked memory
  ///   cannot be had.
  public static func deriveBytes<IKM: ContiguousBytes, Salt: ContiguousBytes, Info: ContiguousBytes>(
    inputKeyMaterial: IKM, salt: Salt, info: Info, outputByteCount: Int
  ) throws -> SecureBytes {
    guard outputByteCount >= 0, outputByteCount <= maximumOutputByteCount else {
      throw TaskCryptoError.tooLarge(byteCount: outputByteCount, limit: maximumOutputByteCount)
    }
    let pseudoRandomKey = try extract(inputKeyMaterial: inputKeyMaterial, salt: salt)
    return try pseudoRandomKey.withUnsafeBytes {
      try expand(rawKey: $0, info: info, outputByteCount: outputByteCount)
    }
  }

  /// HKDF-Extract: PRK = HMAC-SHA-512(key = salt, IKM), 64 bytes in locked
  /// memory. libsodium's HMAC takes a key of any length (hashing one longer
  /// than the 128-byte block, as RFC 2104 says); an empty salt is replaced
  /// by 64 zero bytes.
  static func extract<IKM: ContiguousBytes, Salt: ContiguousBytes>(
    inputKeyMaterial: IKM, salt: Salt
  ) throws -> SecureBytes {
    ensureSodium()
    let output = try SecureBytes(zeroedCount: hashByteCount)
    var state = crypto_auth_hmacsha512_state()
    defer { withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) } }
    // The salt is public; an empty one is 64 zero bytes.
    let saltBytes = salt.withUnsafeBytes { Array($0) }
    let key = saltBytes.isEmpty ? [UInt8](repeating: 0, count: hashByteCount) : saltBytes
    // crypto_auth_hmacsha512_init returns 0 for every key length.
    key.withUnsafeBufferPointer { _ = crypto_auth_hmacsha512_init(&state, $0.baseAddress!, $0.count) }
    inputKeyMaterial.withUnsafeBytes { ikm in
      guard let base = ikm.baseAddress, !ikm.isEmpty else { return }
      _ = crypto_auth_hmacsha512_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(ikm.count))
    }
    output.withUnsafeMutableBytes {
      _ = crypto_auth_hmacsha512_final(&state, $0.bindMemory(to: UInt8.self).baseAddress!)
    }
    return output
  }
}
