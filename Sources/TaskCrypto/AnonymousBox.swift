import CSodium

/// Anonymous public-key boxes: libsodium's `crypto_box_seal` (X25519,
/// XSalsa20-Poly1305, an ephemeral sender key and the nonce
/// BLAKE2b-192(ephemeral public key || recipient public key)). Anyone with
/// a device's public key can seal to it; only the holder of the secret key
/// opens. Used to hand a new sync epoch's key to each remaining device.
///
/// Secret keys and opened plaintexts live in `SecureBytes` (locked, wiped).
public enum AnonymousBox {
  /// A public or secret key's length, 32 bytes.
  public static let keyByteCount = 32
  /// What a box adds to its plaintext: the ephemeral public key and the tag, 48 bytes.
  public static let overheadByteCount = 48

  /// A new key pair.
  ///
  /// - Returns: the public key and the secret key.
  /// - Throws: `TaskCryptoError.resourceUnavailable` when locked memory is refused.
  public static func generateKeyPair() throws -> (publicKey: [UInt8], secretKey: SecureBytes) {
    ensureSodium()
    let secret = try SecureBytes.random(count: keyByteCount)
    return (try publicKey(of: secret), secret)
  }

  /// The public key of `secretKey`.
  ///
  /// - Throws: `TaskCryptoError.invalidKeySize` for a secret key that is
  ///   not 32 bytes; `.backendFailure` when libsodium refuses it.
  public static func publicKey(of secretKey: SecureBytes) throws -> [UInt8] {
    ensureSodium()
    guard secretKey.count == keyByteCount else { throw TaskCryptoError.invalidKeySize(secretKey.count) }
    var output = [UInt8](repeating: 0, count: keyByteCount)
    let status = secretKey.withUnsafeBytes { secret in
      crypto_scalarmult_curve25519_base(&output, secret.bindMemory(to: UInt8.self).baseAddress!)
    }
    guard status == 0 else { throw TaskCryptoError.backendFailure(function: "crypto_scalarmult_curve25519_base") }
    return output
  }

  /// Seals `plaintext` to `publicKey`.
  ///
  /// - Returns: the box, `plaintext.count + 48` bytes.
  /// - Throws: `TaskCryptoError.invalidKeySize` for a public key that is
  ///   not 32 bytes; `.backendFailure` when libsodium refuses it (a
  ///   low-order point).
  public static func seal(_ plaintext: SecureBytes, to publicKey: [UInt8]) throws -> [UInt8] {
    ensureSodium()
    guard publicKey.count == keyByteCount else { throw TaskCryptoError.invalidKeySize(publicKey.count) }
    var box = [UInt8](repeating: 0, count: plaintext.count + overheadByteCount)
    let status = plaintext.withUnsafeBytes { message in
      crypto_box_seal(
        &box, message.bindMemory(to: UInt8.self).baseAddress!, UInt64(message.count), publicKey)
    }
    guard status == 0 else { throw TaskCryptoError.backendFailure(function: "crypto_box_seal") }
    return box
  }

  /// Opens `box` with the recipient's key pair.
  ///
  /// - Returns: the plaintext, in locked memory.
  /// - Throws: `TaskCryptoError.authenticationFailed` for a box that does
  ///   not open with these keys (another recipient, altered, truncated);
  ///   `.invalidKeySize`; `.resourceUnavailable`.
  public static func open(_ box: [UInt8], publicKey: [UInt8], secretKey: SecureBytes) throws -> SecureBytes {
    ensureSodium()
    guard publicKey.count == keyByteCount, secretKey.count == keyByteCount else {
      throw TaskCryptoError.invalidKeySize(secretKey.count == keyByteCount ? publicKey.count : secretKey.count)
    }
    guard box.count >= overheadByteCount else { throw TaskCryptoError.authenticationFailed }
    let plaintext = try SecureBytes(zeroedCount: box.count - overheadByteCount)
    let status = plaintext.withUnsafeMutableBytes { output in
      secretKey.withUnsafeBytes { secret in
        crypto_box_seal_open(
          output.bindMemory(to: UInt8.self).baseAddress!, box, UInt64(box.count), publicKey,
          secret.bindMemory(to: UInt8.self).baseAddress!)
      }
    }
    guard status == 0 else { throw TaskCryptoError.authenticationFailed }
    return plaintext
  }
}
