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
      return try plaintext.withUnsafeBytes { input in
        guard input.count <= maximumPlaintextByteCount else {
          throw TaskCryptoError.tooLarge(byteCount: input.count, limit: maximumPlaintextByteCount)
        }
        var ciphertext = [UInt8](repeating: 0, count: input.count)
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        try ciphertext.withUnsafeMutableBytes { ciphertextBytes in
          try tag.withUnsafeMutableBytes { tagBytes in
            try nonce.withUnsafeBytes { nonceBytes in
              try aad.withUnsafeBytes { aadBytes in
                try sealRaw(
                  input, using: key, nonce: nonceBytes, authenticating: aadBytes, ciphertext: ciphertextBytes,
                  tag: tagBytes)
              }
            }
          }
        }
        return SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
      }
    }

    /// Seals into one buffer laid out as `nonce || ciphertext || tag`, the
    /// layout of a sealed value's payload, without intermediate copies.
    static func sealCombined<Plain: ContiguousBytes, AAD: ContiguousBytes>(
      _ plaintext: Plain,
      using key: SymmetricKey,
      nonce: [UInt8],
      authenticating aad: AAD
    ) throws -> [UInt8] {
      precondition(nonce.count == nonceByteCount)
      return try plaintext.withUnsafeBytes { input in
        guard input.count <= maximumPlaintextByteCount else {
          throw TaskCryptoError.tooLarge(byteCount: input.count, limit: maximumPlaintextByteCount)
        }
        let total = nonceByteCount + input.count + tagByteCount
        return try [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
          // Every byte is written: the nonce here, the rest by the encryption.
          let out = UnsafeMutableRawBufferPointer(buffer)
          initialized = total
          nonce.withUnsafeBytes { out.copyMemory(from: $0) }
          try aad.withUnsafeBytes { aadBytes in
            try nonce.withUnsafeBytes { nonceBytes in
              try sealRaw(
                input, using: key, nonce: nonceBytes, authenticating: aadBytes,
                ciphertext: UnsafeMutableRawBufferPointer(rebasing: out[nonceByteCount..<(total - tagByteCount)]),
                tag: UnsafeMutableRawBufferPointer(rebasing: out[(total - tagByteCount)...]))
            }
          }
        }
      }
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
      try [UInt8](unsafeUninitializedCapacity: box.ciphertext.count) { buffer, initialized in
        // Every byte is written by the decryption or wiped on failure.
        initialized = buffer.count
        try box.nonce.withUnsafeBytes { nonce in
          try box.ciphertext.withUnsafeBytes { ciphertext in
            try box.tag.withUnsafeBytes { tag in
              try aad.withUnsafeBytes { aadBytes in
                try openRaw(
                  nonce: nonce, ciphertext: ciphertext, tag: tag, using: key, authenticating: aadBytes,
                  into: UnsafeMutableRawBufferPointer(buffer))
              }
            }
          }
        }
      }
    }

    /// Verifies and decrypts `box` with no associated data.
    ///
    /// - Throws: as `open(_:using:authenticating:)`.
    public static func open(_ box: SealedBox, using key: SymmetricKey) throws -> [UInt8] {
      try open(box, using: key, authenticating: [UInt8]())
    }

    /// Verifies and decrypts `nonce || ciphertext || tag` (at least 28
    /// bytes) straight from one buffer.
    static func open<AAD: ContiguousBytes>(
      combined: [UInt8],
      using key: SymmetricKey,
      authenticating aad: AAD
    ) throws -> [UInt8] {
      guard combined.count >= nonceByteCount + tagByteCount else {
        throw TaskCryptoError.truncated(byteCount: combined.count)
      }
      let count = combined.count - nonceByteCount - tagByteCount
      return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        // Every byte is written by the decryption or wiped on failure.
        let output = UnsafeMutableRawBufferPointer(buffer)
        initialized = count
        try combined.withUnsafeBytes { bytes in
          try aad.withUnsafeBytes { aadBytes in
            try openRaw(
              nonce: UnsafeRawBufferPointer(rebasing: bytes[..<nonceByteCount]),
              ciphertext: UnsafeRawBufferPointer(rebasing: bytes[nonceByteCount..<(bytes.count - tagByteCount)]),
              tag: UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - tagByteCount)...]),
              using: key, authenticating: aadBytes, into: output)
          }
        }
      }
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
        try box.nonce.withUnsafeBytes { nonce in
          try box.ciphertext.withUnsafeBytes { ciphertext in
            try box.tag.withUnsafeBytes { tag in
              try aad.withUnsafeBytes { aadBytes in
                try openRaw(
                  nonce: nonce, ciphertext: ciphertext, tag: tag, using: key, authenticating: aadBytes, into: output)
              }
            }
          }
        }
      }
      return plaintext
    }

    /// The one place that encrypts: EVP AES-256-GCM over raw buffers.
    private static func sealRaw(
      _ input: UnsafeRawBufferPointer,
      using key: SymmetricKey,
      nonce: UnsafeRawBufferPointer,
      authenticating aad: UnsafeRawBufferPointer,
      ciphertext: UnsafeMutableRawBufferPointer,
      tag: UnsafeMutableRawBufferPointer
    ) throws {
      precondition(ciphertext.count == input.count && tag.count == tagByteCount && nonce.count == nonceByteCount)
      let context = try CipherContext()
      try key.withUnsafeBytes { keyBytes in
        try context.check(
          EVP_EncryptInit_ex(
            context.pointer, EVP_aes_256_gcm(), nil, keyBytes.bindMemory(to: UInt8.self).baseAddress,
            nonce.bindMemory(to: UInt8.self).baseAddress), "EVP_EncryptInit_ex")
      }
      try context.update(aad, into: nil, encrypting: true)
      try context.update(input, into: ciphertext, encrypting: true)
      var finalLength: Int32 = 0
      var scratch = [UInt8](repeating: 0, count: 16)
      try context.check(EVP_EncryptFinal_ex(context.pointer, &scratch, &finalLength), "EVP_EncryptFinal_ex")
      try context.check(
        EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), tag.baseAddress),
        "EVP_CIPHER_CTX_ctrl(GET_TAG)")
    }

    /// The one place that decrypts. On any failure the output is wiped, so
    /// unauthenticated plaintext never survives.
    private static func openRaw(
      nonce: UnsafeRawBufferPointer,
      ciphertext: UnsafeRawBufferPointer,
      tag: UnsafeRawBufferPointer,
      using key: SymmetricKey,
      authenticating aad: UnsafeRawBufferPointer,
      into output: UnsafeMutableRawBufferPointer
    ) throws {
      guard nonce.count == nonceByteCount else { throw TaskCryptoError.truncated(byteCount: nonce.count) }
      guard tag.count == tagByteCount else { throw TaskCryptoError.authenticationFailed }
      precondition(output.count == ciphertext.count)
      do {
        let context = try CipherContext()
        try key.withUnsafeBytes { keyBytes in
          try context.check(
            EVP_DecryptInit_ex(
              context.pointer, EVP_aes_256_gcm(), nil, keyBytes.bindMemory(to: UInt8.self).baseAddress,
              nonce.bindMemory(to: UInt8.self).baseAddress), "EVP_DecryptInit_ex")
        }
        try context.update(aad, into: nil, encrypting: false)
        try context.update(ciphertext, into: output, encrypting: false)
        // SET_TAG takes a non-const pointer but only reads it; copy to be safe.
        var expected = Array(tag)
        try expected.withUnsafeMutableBytes { tagBytes in
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
      } catch {
        wipe(output)
        throw error
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
