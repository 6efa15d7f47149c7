import COpenSSL
import FoundationEssentials

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

    /// A sealed message: nonce, ciphertext and tag, held as one buffer.
    ///
    /// Byte layout of `combined`: `nonce (12) || ciphertext (n) || tag (16)`.
    /// The parts are read from that buffer; a seal writes it in one
    /// allocation (issue 14, goal 2).
    public struct SealedBox: Sendable, Equatable {
      /// `nonce || ciphertext || tag`.
      public let combined: [UInt8]

      /// The 12-byte nonce (a copy of the first 12 bytes of `combined`).
      public var nonce: [UInt8] { Array(combined[..<GCM.nonceByteCount]) }
      /// The ciphertext, as long as the plaintext (a copy).
      public var ciphertext: [UInt8] {
        Array(combined[GCM.nonceByteCount..<(combined.count - GCM.tagByteCount)])
      }
      /// The 16-byte authentication tag (a copy).
      public var tag: [UInt8] { Array(combined[(combined.count - GCM.tagByteCount)...]) }

      /// Takes `nonce || ciphertext || tag`, copied once.
      ///
      /// - Throws: `TaskCryptoError.truncated` when fewer than 28 bytes.
      public init<Bytes: ContiguousBytes>(combined: Bytes) throws {
        // Copied once, straight from the caller's bytes (a vault store is
        // megabytes).
        self.combined = try combined.withUnsafeBytes { bytes in
          guard bytes.count >= GCM.nonceByteCount + GCM.tagByteCount else {
            throw TaskCryptoError.truncated(byteCount: bytes.count)
          }
          return Array(bytes)
        }
      }

      init(nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
        combined = nonce + ciphertext + tag
      }

      /// A box over `combined`, which the caller made at least 28 bytes.
      init(checkedCombined: [UInt8]) {
        combined = checkedCombined
      }

      /// The ciphertext's length.
      var ciphertextByteCount: Int { combined.count - GCM.nonceByteCount - GCM.tagByteCount }

      /// Calls `body` with the nonce, ciphertext and tag, in place.
      func withParts<Result>(
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Result
      ) rethrows -> Result {
        try combined.withUnsafeBytes { bytes in
          try body(
            UnsafeRawBufferPointer(rebasing: bytes[..<GCM.nonceByteCount]),
            UnsafeRawBufferPointer(rebasing: bytes[GCM.nonceByteCount..<(bytes.count - GCM.tagByteCount)]),
            UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - GCM.tagByteCount)...]))
        }
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
    /// - Throws: `TaskCryptoError.tooLarge`, `.resourceUnavailable` when
    ///   the kernel gives no random bytes, or `.backendFailure` if OpenSSL
    ///   fails (allocation).
    @_specialize(exported:true,where Plain == [UInt8], AAD == [UInt8])
    public static func seal<Plain: ContiguousBytes, AAD: ContiguousBytes>(
      _ plaintext: Plain,
      using key: SymmetricKey,
      authenticating aad: AAD
    ) throws -> SealedBox {
      // The exported specialisation above serves byte arrays: a caller in
      // another module would otherwise run the unspecialised generic code,
      // whose runtime metadata lookups cost about 0.1 µs a call. The work
      // itself is in the non-generic `sealBytes`.
      try plaintext.withUnsafeBytes { input in
        try aad.withUnsafeBytes { aadBytes in try sealBytes(input, using: key, nonce: nil, authenticating: aadBytes) }
      }
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
        try nonce.withUnsafeBytes { nonceBytes in
          try aad.withUnsafeBytes { aadBytes in
            try sealBytes(input, using: key, nonce: nonceBytes, authenticating: aadBytes)
          }
        }
      }
    }

    /// Seals `input` into one new `nonce || ciphertext || tag` buffer: the
    /// nonce drawn straight into it (or copied from `nonce`, the test
    /// seam), then encryption in place.
    private static func sealBytes(
      _ input: UnsafeRawBufferPointer,
      using key: SymmetricKey,
      nonce: UnsafeRawBufferPointer?,
      authenticating aad: UnsafeRawBufferPointer
    ) throws -> SealedBox {
      guard input.count <= maximumPlaintextByteCount else {
        throw TaskCryptoError.tooLarge(byteCount: input.count, limit: maximumPlaintextByteCount)
      }
      let total = nonceByteCount + input.count + tagByteCount
      let combined = try [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
        // Every byte is written: the nonce, then the encryption and tag.
        let out = UnsafeMutableRawBufferPointer(buffer)
        let nonceOut = UnsafeMutableRawBufferPointer(rebasing: out[..<nonceByteCount])
        if let nonce {
          nonceOut.copyMemory(from: nonce)
        } else {
          try SecureRandom.nonce(into: nonceOut)
        }
        try sealRaw(
          input, using: key, nonce: UnsafeRawBufferPointer(nonceOut), authenticating: aad,
          UnsafeRawBufferPointer(start: nil, count: 0),
          ciphertext: UnsafeMutableRawBufferPointer(rebasing: out[nonceByteCount..<(total - tagByteCount)]),
          tag: UnsafeMutableRawBufferPointer(rebasing: out[(total - tagByteCount)...]))
        initialized = total
      }
      return SealedBox(checkedCombined: combined)
    }

    /// Verifies and decrypts `box`, also verifying `aad`.
    ///
    /// - Returns: the plaintext, released only after the tag verified.
    /// - Throws: `TaskCryptoError.authenticationFailed` when the tag does not
    ///   verify; `.backendFailure` when OpenSSL fails for another reason.
    @_specialize(exported:true,where AAD == [UInt8])
    public static func open<AAD: ContiguousBytes>(
      _ box: SealedBox,
      using key: SymmetricKey,
      authenticating aad: AAD
    ) throws -> [UInt8] {
      try [UInt8](unsafeUninitializedCapacity: box.ciphertextByteCount) { buffer, initialized in
        // Every byte is written by the decryption or wiped on failure.
        initialized = buffer.count
        try open(box, using: key, authenticating: aad, into: UnsafeMutableRawBufferPointer(buffer))
      }
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
      let plaintext = try SecureBytes(zeroedCount: box.ciphertextByteCount)
      try plaintext.withUnsafeMutableBytes { output in
        try open(box, using: key, authenticating: aad, into: output)
      }
      return plaintext
    }

    /// Verifies and decrypts `box` into `output` (as many bytes as the
    /// ciphertext): the one path from a sealed box's parts to `openRaw`, for
    /// `open` and `openSecret`.
    private static func open<AAD: ContiguousBytes>(
      _ box: SealedBox, using key: SymmetricKey, authenticating aad: AAD, into output: UnsafeMutableRawBufferPointer
    ) throws {
      try box.withParts { nonce, ciphertext, tag in
        try aad.withUnsafeBytes { aadBytes in
          try openRaw(
            nonce: nonce, ciphertext: ciphertext, tag: tag, using: key,
            authenticating: aadBytes, UnsafeRawBufferPointer(start: nil, count: 0), into: output)
        }
      }
    }

    /// The one place that encrypts: EVP AES-256-GCM over raw buffers, with
    /// a context of `key`'s cache that only gets a new nonce. The
    /// associated data is `aad` followed by `aadTail` (GCM authenticates
    /// the concatenation), so callers need not join them.
    static func sealRaw(
      _ input: UnsafeRawBufferPointer,
      using key: SymmetricKey,
      nonce: UnsafeRawBufferPointer,
      authenticating aad: UnsafeRawBufferPointer,
      _ aadTail: UnsafeRawBufferPointer,
      ciphertext: UnsafeMutableRawBufferPointer,
      tag: UnsafeMutableRawBufferPointer
    ) throws {
      precondition(ciphertext.count == input.count && tag.count == tagByteCount && nonce.count == nonceByteCount)
      try key.contexts.withContext(encrypting: true, key: key.storage) { context in
        try check(
          EVP_EncryptInit_ex(context, nil, nil, nil, nonce.bindMemory(to: UInt8.self).baseAddress),
          "EVP_EncryptInit_ex")
        try feedAssociatedData(context, aad, aadTail, encrypting: true)
        try update(context, input, into: ciphertext, encrypting: true)
        var finalLength: Int32 = 0
        var scratch: (UInt64, UInt64) = (0, 0)
        try withUnsafeMutableBytes(of: &scratch) { scratchBytes in
          try check(
            EVP_EncryptFinal_ex(context, scratchBytes.bindMemory(to: UInt8.self).baseAddress, &finalLength),
            "EVP_EncryptFinal_ex")
        }
        try check(
          withTagParameter(tag.baseAddress!) { EVP_CIPHER_CTX_get_params(context, $0) },
          "EVP_CIPHER_CTX_get_params(tag)")
      }
    }

    /// The one place that decrypts. `output` may be exactly `ciphertext`
    /// (decryption in place). On any failure the output is wiped, so
    /// unauthenticated plaintext never survives.
    static func openRaw(
      nonce: UnsafeRawBufferPointer,
      ciphertext: UnsafeRawBufferPointer,
      tag: UnsafeRawBufferPointer,
      using key: SymmetricKey,
      authenticating aad: UnsafeRawBufferPointer,
      _ aadTail: UnsafeRawBufferPointer,
      into output: UnsafeMutableRawBufferPointer
    ) throws {
      guard nonce.count == nonceByteCount else { throw TaskCryptoError.truncated(byteCount: nonce.count) }
      guard tag.count == tagByteCount else { throw TaskCryptoError.authenticationFailed }
      precondition(output.count == ciphertext.count)
      do {
        try key.contexts.withContext(encrypting: false, key: key.storage) { context in
          try check(
            EVP_DecryptInit_ex(context, nil, nil, nil, nonce.bindMemory(to: UInt8.self).baseAddress),
            "EVP_DecryptInit_ex")
          try feedAssociatedData(context, aad, aadTail, encrypting: false)
          try update(context, ciphertext, into: output, encrypting: false)
          // The parameter takes a non-const pointer; setting only reads the tag.
          try check(
            withTagParameter(UnsafeMutableRawPointer(mutating: tag.baseAddress!)) {
              EVP_CIPHER_CTX_set_params(context, $0)
            }, "EVP_CIPHER_CTX_set_params(tag)")
          var finalLength: Int32 = 0
          var scratch: (UInt64, UInt64) = (0, 0)
          // EVP_DecryptFinal_ex returns <= 0 exactly when the tag does not verify.
          let verified = withUnsafeMutableBytes(of: &scratch) { scratchBytes in
            EVP_DecryptFinal_ex(context, scratchBytes.bindMemory(to: UInt8.self).baseAddress, &finalLength) > 0
          }
          guard verified else {
            ERR_clear_error()
            throw TaskCryptoError.authenticationFailed
          }
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

/// Fails with the OpenSSL function's name unless `result` is 1.
private func check(_ result: Int32, _ function: String) throws {
  guard result == 1 else {
    ERR_clear_error()
    throw TaskCryptoError.backendFailure(function: function)
  }
}

/// The name of the GCM tag parameter, OSSL_CIPHER_PARAM_AEAD_TAG.
private let tagParameterName: StaticString = "tag"

/// Calls `body` with a parameter list naming the 16-byte tag at `tag`: the
/// provider's own interface, one layer below `EVP_CIPHER_CTX_ctrl`, which
/// builds the same list on every call.
@inline(__always)
private func withTagParameter(_ tag: UnsafeMutableRawPointer, _ body: (UnsafeMutablePointer<OSSL_PARAM>) -> Int32)
  -> Int32
{
  let name = UnsafeRawPointer(tagParameterName.utf8Start).assumingMemoryBound(to: CChar.self)
  // Filled in place, as OSSL_PARAM_octet_string and OSSL_PARAM_END spell
  // them, rather than by two calls that return the structures by value.
  var parameters = (
    OSSL_PARAM(
      key: name, data_type: UInt32(OSSL_PARAM_OCTET_STRING), data: tag, data_size: AES.GCM.tagByteCount,
      return_size: -1),  // OSSL_PARAM_UNMODIFIED, (size_t)-1
    OSSL_PARAM(key: nil, data_type: 0, data: nil, data_size: 0, return_size: 0)
  )
  return withUnsafeMutablePointer(to: &parameters) {
    $0.withMemoryRebound(to: OSSL_PARAM.self, capacity: 2, body)
  }
}

/// Feeds `aad || aadTail` as associated data: joined on the stack into one
/// update when short (each EVP update has a fixed cost), else in two.
@inline(__always)
private func feedAssociatedData(
  _ context: OpaquePointer, _ aad: UnsafeRawBufferPointer, _ aadTail: UnsafeRawBufferPointer, encrypting: Bool
) throws {
  let total = aad.count + aadTail.count
  guard !aadTail.isEmpty, total <= 1024 else {
    try update(context, aad, into: nil, encrypting: encrypting)
    try update(context, aadTail, into: nil, encrypting: encrypting)
    return
  }
  try withUnsafeTemporaryAllocation(byteCount: total, alignment: 1) { joined in
    if !aad.isEmpty { joined.baseAddress!.copyMemory(from: aad.baseAddress!, byteCount: aad.count) }
    (joined.baseAddress! + aad.count).copyMemory(from: aadTail.baseAddress!, byteCount: aadTail.count)
    try update(context, UnsafeRawBufferPointer(joined), into: nil, encrypting: encrypting)
  }
}

/// Feeds `input` through the cipher in chunks below Int32.max. With a nil
/// `output` the input is associated data. Nothing is fed for empty input.
private func update(
  _ context: OpaquePointer, _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer?,
  encrypting: Bool
) throws {
  let chunk = 1 << 30
  var offset = 0
  while offset < input.count {
    let length = Swift.min(chunk, input.count - offset)
    var written: Int32 = 0
    let source = input.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self)
    let target = output.map { $0.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self) }
    let result =
      encrypting
      ? EVP_EncryptUpdate(context, target, &written, source, Int32(length))
      : EVP_DecryptUpdate(context, target, &written, source, Int32(length))
    try check(result, encrypting ? "EVP_EncryptUpdate" : "EVP_DecryptUpdate")
    if output != nil && Int(written) != length {
      throw TaskCryptoError.backendFailure(function: encrypting ? "EVP_EncryptUpdate" : "EVP_DecryptUpdate")
    }
    offset += length
  }
}
