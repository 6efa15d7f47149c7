import COpenSSL
import Foundation

/// The Advanced Encryption Standard.
public enum AES {}

extension AES {
  /// AES-256 in Galois/Counter Mode (NIST SP 800-38D), through OpenSSL's EVP
  /// interface, with 96-bit random nonces and 128-bit tags.
  ///
  /// `seal` authenticates the plaintext and the associated data together;
  /// `open` releases plaintext only after the tag has verified. Nonces come
  /// from the operating system's CSPRNG on every call and a caller cannot
  /// choose one, so nonce uniqueness rests on the random draw: keep each key
  /// under 2^32 seals (SECURITY.md, "Nonces and the per-key bound").
  public enum GCM {
    /// Nonce size in bytes: 12 (96 bits).
    public static let nonceByteCount = 12
    /// Tag size in bytes: 16 (128 bits).
    public static let tagByteCount = 16
    /// The largest plaintext `seal` accepts, 1 GiB; the format allows
    /// more but nothing in TaskKey needs it.
    public static let maximumPlaintextByteCount = 1 << 30

    /// A sealed message: nonce, ciphertext and tag.
    ///
    /// Byte layout of `combined`: `nonce (12) || ciphertext (n) || tag (16)`.
    public struct SealedBox: Sendable, Equatable {
      /// The 12-byte nonce.
      public let nonce: [UInt8]
      /// The ciphertext, as long as the plaintext.
      public let ciphertext: [UInt8]
      /// The 16-byte authentication tag.
      public let tag: [UInt8]

      /// `nonce || ciphertext || tag`.
      public var combined: [UInt8] { nonce + ciphertext + tag }

      /// Splits `nonce || ciphertext || tag`.
      ///
      /// - Throws: `TaskCryptoError.truncated` when fewer than 28 bytes.
      public init<Bytes: ContiguousBytes>(combined: Bytes) throws {
        let bytes = combined.withUnsafeBytes { [UInt8]($0) }
        guard bytes.count >= GCM.nonceByteCount + GCM.tagByteCount else {
          throw TaskCryptoError.truncated(byteCount: bytes.count)
        }
        self.nonce = Array(bytes[..<GCM.nonceByteCount])
        self.ciphertext = Array(bytes[GCM.nonceByteCount..<(bytes.count - GCM.tagByteCount)])
        self.tag = Array(bytes[(bytes.count - GCM.tagByteCount)...])
      }

      init(nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
        self.nonce = nonce
        self.ciphertext = ciphertext
        self.tag = tag
      }
    }

    /// Encrypts and authenticates `plaintext`, also authenticating `aad`,
    /// under a fresh random nonce.
    ///
    /// - Parameters:
    ///   - plaintext: the bytes to seal, at most `maximumPlaintextByteCount`.
    ///   - key: a 256-bit key.
    ///   - aad: associated data that is authenticated but not encrypted.
    /// - Returns: the sealed box.
    /// - Throws: `TaskCryptoError.tooLarge`, or `.backendFailure` if OpenSSL
    ///   fails (allocation).
    public static func seal<Plain: ContiguousBytes, AAD: ContiguousBytes>(
      _ plaintext: Plain,
      using key: SymmetricKey,
      authenticating aad: AAD
    ) throws -> SealedBox {
      let nonce = SecureRandom.bytes(count: nonceByteCount)
      return try seal(plaintext, using: key, nonce: nonce, authenticating: aad)
    }

    /// Encrypts and authenticates `plaintext` with no associated data.
    ///
    /// - Throws: as `seal(_:using:authenticating:)`.
    public static func seal<Plain: ContiguousBytes>(_ plaintext: Plain, using key: SymmetricKey) throws -> SealedBox {
      try seal(plaintext, using: key, authenticating: [UInt8]())
    }

    /// The test seam: seals under a chosen nonce. Internal so that only
    /// `@testable` test code and the vector generator can reach it; a
    /// repeated nonce under one key breaks GCM completely.
    static func seal<Plain: ContiguousBytes, AAD: ContiguousBytes>(
      _ plaintext: Plain,
      using key: SymmetricKey,
      nonce: [UInt8],
      authenticating aad: AAD
    ) throws -> SealedBox {
      precondition(nonce.count == nonceByteCount)
      let context = try CipherContext()
      var ciphertext = [UInt8]()
      var tag = [UInt8](repeating: 0, count: tagByteCount)
      try plaintext.withUnsafeBytes { input in
        guard input.count <= maximumPlaintextByteCount else {
          throw TaskCryptoError.tooLarge(byteCount: input.count, limit: maximumPlaintextByteCount)
        }
        try key.withUnsafeBytes { keyBytes in
          try nonce.withUnsafeBytes { nonceBytes in
            try context.check(
              EVP_EncryptInit_ex(
                context.pointer, EVP_aes_256_gcm(), nil,
                keyBytes.bindMemory(to: UInt8.self).baseAddress,
                nonceBytes.bindMemory(to: UInt8.self).baseAddress), "EVP_EncryptInit_ex")
          }
        }
        try aad.withUnsafeBytes { aadBytes in
          try context.update(aadBytes, into: nil, encrypting: true)
        }
        ciphertext = [UInt8](repeating: 0, count: input.count)
        try ciphertext.withUnsafeMutableBytes { output in
          try context.update(input, into: output, encrypting: true)
        }
        var finalLength: Int32 = 0
        var scratch = [UInt8](repeating: 0, count: 16)
        try context.check(EVP_EncryptFinal_ex(context.pointer, &scratch, &finalLength), "EVP_EncryptFinal_ex")
        try tag.withUnsafeMutableBytes { tagBytes in
          try context.check(
            EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), tagBytes.baseAddress),
            "EVP_CIPHER_CTX_ctrl(GET_TAG)")
        }
      }
      return SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
    }

    /// Verifies and decrypts `box`, also verifying `aad`.
    ///
    /// - Returns: the plaintext, released only after the tag verified.
    /// - Throws: `TaskCryptoError.authenticationFailed` when the tag does not
    ///   verify; `.backendFailure` when OpenSSL fails for another reason.
    public static func open<AAD: ContiguousBytes>(
      _ box: SealedBox,
      using key: SymmetricKey,
      authenticating aad: AAD
    ) throws -> [UInt8] {
      var plaintext = [UInt8](repeating: 0, count: box.ciphertext.count)
      do {
        try plaintext.withUnsafeMutableBytes { output in
          try open(box, using: key, authenticating: aad, into: output)
        }
      } catch {
        // Never leave unauthenticated plaintext in memory.
        plaintext.withUnsafeMutableBytes { wipe($0) }
        throw error
      }
      return plaintext
    }

    /// Verifies and decrypts `box` with no associated data.
    ///
    /// - Throws: as `open(_:using:authenticating:)`.
    public static func open(_ box: SealedBox, using key: SymmetricKey) throws -> [UInt8] {
      try open(box, using: key, authenticating: [UInt8]())
    }

    /// Verifies and decrypts `box` into locked memory, for plaintexts that
    /// are themselves secrets (keys, passphrases, provider tokens).
    ///
    /// - Throws: as `open(_:using:authenticating:)`.
    public static func openSecret<AAD: ContiguousBytes>(
      _ box: SealedBox,
      using key: SymmetricKey,
      authenticating aad: AAD
    ) throws -> SecureBytes {
      let plaintext = try SecureBytes(zeroedCount: box.ciphertext.count)
      try plaintext.withUnsafeMutableBytes { output in
        do {
          try open(box, using: key, authenticating: aad, into: output)
        } catch {
          wipe(output)
          throw error
        }
      }
      return plaintext
    }

    private static func open(
      _ box: SealedBox,
      using key: SymmetricKey,
      authenticating aad: some ContiguousBytes,
      into output: UnsafeMutableRawBufferPointer
    ) throws {
      guard box.nonce.count == nonceByteCount else { throw TaskCryptoError.truncated(byteCount: box.nonce.count) }
      guard box.tag.count == tagByteCount else { throw TaskCryptoError.authenticationFailed }
      let context = try CipherContext()
      try key.withUnsafeBytes { keyBytes in
        try box.nonce.withUnsafeBytes { nonceBytes in
          try context.check(
            EVP_DecryptInit_ex(
              context.pointer, EVP_aes_256_gcm(), nil,
              keyBytes.bindMemory(to: UInt8.self).baseAddress,
              nonceBytes.bindMemory(to: UInt8.self).baseAddress), "EVP_DecryptInit_ex")
        }
      }
      try aad.withUnsafeBytes { try context.update($0, into: nil, encrypting: false) }
      try box.ciphertext.withUnsafeBytes { try context.update($0, into: output, encrypting: false) }
      var tag = box.tag
      try tag.withUnsafeMutableBytes { tagBytes in
        try context.check(
          EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), tagBytes.baseAddress),
          "EVP_CIPHER_CTX_ctrl(SET_TAG)")
      }
      var finalLength: Int32 = 0
      var scratch = [UInt8](repeating: 0, count: 16)
      // EVP_DecryptFinal_ex returns <= 0 exactly when the tag does not verify.
      guard EVP_DecryptFinal_ex(context.pointer, &scratch, &finalLength) > 0 else {
        ERR_clear_error()
        throw TaskCryptoError.authenticationFailed
      }
    }
  }
}

/// Overwrites a buffer with zeros in a way the optimiser keeps.
func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
  guard let base = buffer.baseAddress, buffer.count > 0 else { return }
  OPENSSL_cleanse(base, buffer.count)
}

/// Owns one `EVP_CIPHER_CTX` and frees it on every path.
private final class CipherContext {
  let pointer: OpaquePointer

  init() throws {
    guard let pointer = EVP_CIPHER_CTX_new() else {
      throw TaskCryptoError.backendFailure(function: "EVP_CIPHER_CTX_new")
    }
    self.pointer = pointer
  }

  deinit { EVP_CIPHER_CTX_free(pointer) }

  func check(_ result: Int32, _ function: String) throws {
    guard result == 1 else {
      ERR_clear_error()
      throw TaskCryptoError.backendFailure(function: function)
    }
  }

  /// Feeds `input` through the cipher in chunks below Int32.max. With a nil
  /// `output` the input is associated data.
  func update(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer?, encrypting: Bool) throws {
    let chunk = 1 << 30
    var offset = 0
    while offset < input.count {
      let length = Swift.min(chunk, input.count - offset)
      var written: Int32 = 0
      let source = input.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self)
      let target = output.map { $0.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self) }
      let result =
        encrypting
        ? EVP_EncryptUpdate(pointer, target, &written, source, Int32(length))
        : EVP_DecryptUpdate(pointer, target, &written, source, Int32(length))
      try check(result, encrypting ? "EVP_EncryptUpdate" : "EVP_DecryptUpdate")
      if output != nil && Int(written) != length {
        throw TaskCryptoError.backendFailure(function: encrypting ? "EVP_EncryptUpdate" : "EVP_DecryptUpdate")
      }
      offset += length
    }
  }
}
