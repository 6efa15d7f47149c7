import CSodium

/// SHA-512 through libsodium (`crypto_hash_sha512`). TaskKey derives with
/// HMAC-SHA-512 (HKDF) but never hashes with plain SHA-512, so this is a
/// package seam, not public API: the vectors target uses it to compare a
/// released message with the `msgSha512` the published chunked-encryption
/// vectors state (only TaskCrypto may call libsodium).
package enum SHA512 {
  /// The 64-byte digest of `bytes`.
  package static func hash(_ bytes: [UInt8]) -> [UInt8] {
    ensureSodium()
    var digest = [UInt8](repeating: 0, count: 64)
    // crypto_hash_sha512 returns 0 for every input.
    _ = crypto_hash_sha512(&digest, bytes, UInt64(bytes.count))
    return digest
  }
}
