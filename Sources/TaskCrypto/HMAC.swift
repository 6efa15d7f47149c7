import CSodium
import FoundationEssentials

/// HMAC-SHA256 (RFC 2104, FIPS 198-1) through libsodium, one-shot or
/// incremental, keyed only with a 256-bit `SymmetricKey`.
///
/// Verification compares in constant time. The code is a public value (a
/// tag), not a secret, so it is returned as an ordinary array.
public struct HMACSHA256 {
  /// Size of an authentication code in bytes: 32.
  public static let byteCount = 32

  private var state = crypto_auth_hmacsha256_state()

  /// Starts an authentication code under `key`.
  public init(key: SymmetricKey) {
    key.withUnsafeBytes { Self.start(&state, rawKey: $0) }
  }

  /// The test seam: any key length, for the RFC 4231 vectors.
  init(keyBytes: [UInt8]) {
    keyBytes.withUnsafeBytes { Self.start(&state, rawKey: $0) }
  }

  private static func start(_ state: inout crypto_auth_hmacsha256_state, rawKey: UnsafeRawBufferPointer) {
    ensureSodium()
    var spare: UInt8 = 0
    withUnsafePointer(to: &spare) { fallback in
      let base = rawKey.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? fallback
      // crypto_auth_hmacsha256_init returns 0 for every key length.
      _ = crypto_auth_hmacsha256_init(&state, base, rawKey.count)
    }
  }

  /// Adds `data` to the authenticated message.
  public mutating func update<Bytes: ContiguousBytes>(data: Bytes) {
    data.withUnsafeBytes { bytes in
      guard bytes.count > 0 else { return }
      _ = crypto_auth_hmacsha256_update(&state, bytes.bindMemory(to: UInt8.self).baseAddress, UInt64(bytes.count))
    }
  }

  /// Returns the 32-byte code for everything added so far and wipes the
  /// internal state; the value must not be updated afterwards.
  public mutating func finalize() -> [UInt8] {
    var out = [UInt8](repeating: 0, count: Self.byteCount)
    _ = crypto_auth_hmacsha256_final(&state, &out)
    withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) }
    return out
  }

  /// Finishes into the caller's (locked) memory of 32 bytes, then wipes the
  /// internal state.
  mutating func finalize(into output: UnsafeMutableRawBufferPointer) {
    precondition(output.count == Self.byteCount)
    _ = crypto_auth_hmacsha256_final(&state, output.bindMemory(to: UInt8.self).baseAddress!)
    withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) }
  }

  /// Derives a 256-bit key as HMAC-SHA256(key, data), computed straight into
  /// locked memory: the derived key never passes through an ordinary array.
  ///
  /// - Parameters:
  ///   - key: the 256-bit key it derives from.
  ///   - data: the derivation's label and context.
  /// - Returns: the derived key.
  /// - Throws: `TaskCryptoError.resourceUnavailable` when locked memory
  ///   cannot be had.
  public static func deriveKey<Bytes: ContiguousBytes>(from key: SymmetricKey, data: Bytes) throws -> SymmetricKey {
    var mac = HMACSHA256(key: key)
    mac.update(data: data)
    let output = try SecureBytes(zeroedCount: byteCount)
    output.withUnsafeMutableBytes { mac.finalize(into: $0) }
    return try SymmetricKey(bytes: output)
  }

  /// Computes the code of `data` under `key` in one call.
  ///
  /// - Parameters:
  ///   - data: the message.
  ///   - key: a 256-bit key.
  /// - Returns: the 32-byte HMAC-SHA256 code.
  public static func authenticationCode<Bytes: ContiguousBytes>(for data: Bytes, using key: SymmetricKey) -> [UInt8] {
    var mac = HMACSHA256(key: key)
    mac.update(data: data)
    return mac.finalize()
  }

  /// Returns whether `code` is the code of `data` under `key`, comparing in
  /// constant time. A code of any length other than 32 bytes is invalid.
  ///
  /// - Parameters:
  ///   - code: the code to check.
  ///   - data: the message it claims to authenticate.
  ///   - key: a 256-bit key.
  /// - Returns: true only when the code verifies.
  public static func isValidAuthenticationCode<Code: ContiguousBytes, Bytes: ContiguousBytes>(
    _ code: Code,
    authenticating data: Bytes,
    using key: SymmetricKey
  ) -> Bool {
    let expected = authenticationCode(for: data, using: key)
    return ConstantTime.equals(code, expected)
  }
}
