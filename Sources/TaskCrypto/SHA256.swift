import COpenSSL
import CSodium
import FoundationEssentials

/// SHA-256 (FIPS 180-4), one-shot or incremental.
///
/// Short inputs (at most `shortInputLimit` bytes: key strings, headers) and
/// the incremental hasher use libsodium's `crypto_hash_sha256`, as HMAC
/// does; longer one-shot inputs (a whole vault file's checksum) use
/// OpenSSL, whose SHA extensions code is about four times faster on
/// megabytes. Both compute the same function (`SHA256Tests` checks them
/// against each other and the published vectors). A `taskkey verify` then
/// never builds OpenSSL's digest tables, about 0.1 ms of its start-up
/// (issue 14, goal 6).
///
/// The incremental hasher is a value type: copying it and updating the copy
/// leaves the original unchanged.
public struct SHA256: Sendable {
  /// Digest size in bytes: 32.
  public static let byteCount = 32
  /// The longest one-shot input hashed by libsodium: 4 KiB.
  static let shortInputLimit = 4096

  private var state = crypto_hash_sha256_state()

  /// Starts an empty hash.
  public init() {
    ensureSodium()
    _ = crypto_hash_sha256_init(&state)
  }

  /// Hashes `data` in one call.
  public static func hash<Bytes: ContiguousBytes>(data: Bytes) -> SHA256Digest {
    data.withUnsafeBytes { bytes in
      bytes.count <= shortInputLimit ? sodiumHash(bytes) : openSSLHash(bytes)
    }
  }

  /// Adds `data` to the hash.
  public mutating func update<Bytes: ContiguousBytes>(data: Bytes) {
    data.withUnsafeBytes { bytes in
      guard let base = bytes.baseAddress, bytes.count > 0 else { return }
      _ = crypto_hash_sha256_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }
  }

  /// Returns the digest of everything added so far. The hasher can go on
  /// being updated afterwards; the result is as if finalised at this point.
  public func finalize() -> SHA256Digest {
    var copy = state
    var out = [UInt8](repeating: 0, count: Self.byteCount)
    _ = crypto_hash_sha256_final(&copy, &out)
    return SHA256Digest(bytes: out)!
  }

  /// libsodium's one-shot SHA-256.
  static func sodiumHash(_ bytes: UnsafeRawBufferPointer) -> SHA256Digest {
    var hasher = SHA256()
    hasher.update(data: bytes)
    return hasher.finalize()
  }

  /// OpenSSL's one-shot SHA-256.
  static func openSSLHash(_ bytes: UnsafeRawBufferPointer) -> SHA256Digest {
    let context = DigestContext()
    context.update(bytes)
    return context.finalize()
  }
}

/// A 32-byte SHA-256 digest; equality is constant time.
public struct SHA256Digest: Sendable, Hashable, CustomStringConvertible, ContiguousBytes {
  /// The 32 digest bytes.
  public let bytes: [UInt8]

  /// Wraps 32 digest bytes, or nil for any other length.
  public init?(bytes: [UInt8]) {
    guard bytes.count == SHA256.byteCount else { return nil }
    self.bytes = bytes
  }

  /// Parses exactly 64 lowercase hex digits, the spelling `hex` gives.
  ///
  /// - Returns: nil for any other text (upper case, wrong length, spaces).
  public init?(hex: String) {
    guard let bytes = Hex.decode(hex), bytes.count == SHA256.byteCount else { return nil }
    self.bytes = bytes
  }

  /// Lowercase hex, 64 digits.
  public var hex: String { Hex.encode(bytes) }

  /// The digest as lowercase hex.
  public var description: String { hex }

  /// Calls `body` with the digest bytes.
  public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try bytes.withUnsafeBytes(body)
  }

  /// Constant-time comparison.
  public static func == (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
    ConstantTime.equals(lhs.bytes, rhs.bytes)
  }

  /// Hashes the digest bytes (digests are not secret).
  public func hash(into hasher: inout Hasher) {
    hasher.combine(bytes)
  }
}

/// Owns one `EVP_MD_CTX`.
private final class DigestContext: @unchecked Sendable {
  let pointer: OpaquePointer

  init() {
    ensureOpenSSL()
    guard let pointer = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
    self.pointer = pointer
    guard EVP_DigestInit_ex(pointer, EVP_sha256(), nil) == 1 else { fatalError("EVP_DigestInit_ex(SHA-256) failed") }
  }

  deinit { EVP_MD_CTX_free(pointer) }

  func update(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    // SHA-256 in OpenSSL cannot fail on valid input; a failure here means
    // memory corruption, and stopping is the only safe outcome.
    guard EVP_DigestUpdate(pointer, base, bytes.count) == 1 else { fatalError("EVP_DigestUpdate failed") }
  }

  func finalize() -> SHA256Digest {
    var out = [UInt8](repeating: 0, count: SHA256.byteCount)
    var length: UInt32 = 0
    guard EVP_DigestFinal_ex(pointer, &out, &length) == 1, length == 32 else { fatalError("EVP_DigestFinal_ex failed") }
    return SHA256Digest(bytes: out)!
  }
}
