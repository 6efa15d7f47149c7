import COpenSSL

/// One message's AES-256-GCM state for chunked encryption: the derived key
/// set once in a reused `EVP_CIPHER_CTX` (its key schedule is computed
/// once), and each chunk sealed or opened by setting only its nonce.
///
/// Nonce of chunk i = base nonce XOR i, as a big-endian integer as wide as
/// the nonce (c2sp.org/chunked-encryption, "AEAD usage"). The AAD is empty.
final class ChunkCipher {
  private let context: OpaquePointer
  private let baseNonce: [UInt8]
  private let encrypting: Bool
  private var nonce = [UInt8](repeating: 0, count: AES.GCM.nonceByteCount)
  private var scratch = [UInt8](repeating: 0, count: 16)

  /// Sets `key` (32 bytes) in a fresh context for sealing or opening.
  init(key: UnsafeRawBufferPointer, baseNonce: [UInt8], encrypting: Bool) throws {
    precondition(key.count == SymmetricKey.byteCount && baseNonce.count == AES.GCM.nonceByteCount)
    guard let context = EVP_CIPHER_CTX_new() else {
      throw TaskCryptoError.backendFailure(function: "EVP_CIPHER_CTX_new")
    }
    self.context = context
    self.baseNonce = baseNonce
    self.encrypting = encrypting
    let result = EVP_CipherInit_ex(
      context, EVP_aes_256_gcm(), nil, key.bindMemory(to: UInt8.self).baseAddress, nil, encrypting ? 1 : 0)
    try check(result, "EVP_CipherInit_ex")
  }

  deinit {
    // EVP_CIPHER_CTX_free cleanses the key schedule.
    EVP_CIPHER_CTX_free(context)
  }

  /// Sets the nonce of chunk `index`: the base nonce with its last 5 bytes
  /// XORed with the index as a big-endian 38-bit integer.
  private func setNonce(index: UInt64) throws {
    precondition(index < ChunkedEncryption.maximumChunkCount)
    for position in 0..<AES.GCM.nonceByteCount { nonce[position] = baseNonce[position] }
    for byte in 0..<5 {
      nonce[AES.GCM.nonceByteCount - 1 - byte] ^= UInt8(truncatingIfNeeded: index >> (8 * UInt64(byte)))
    }
    try check(EVP_CipherInit_ex(context, nil, nil, nil, nonce, -1), "EVP_CipherInit_ex(nonce)")
  }

  /// Seals chunk `index`: writes `plaintext.count + 16` bytes to `output`
  /// (ciphertext, then tag).
  func seal(_ plaintext: UnsafeRawBufferPointer, index: UInt64, into output: UnsafeMutableRawBufferPointer) throws {
    precondition(encrypting && output.count == plaintext.count + AES.GCM.tagByteCount)
    try setNonce(index: index)
    if plaintext.count > 0 {
      var written: Int32 = 0
      try check(
        EVP_CipherUpdate(
          context, output.bindMemory(to: UInt8.self).baseAddress, &written,
          plaintext.bindMemory(to: UInt8.self).baseAddress, Int32(plaintext.count)), "EVP_EncryptUpdate")
    }
    var finalLength: Int32 = 0
    try check(EVP_CipherFinal_ex(context, &scratch, &finalLength), "EVP_EncryptFinal_ex")
    try check(
      EVP_CIPHER_CTX_ctrl(
        context, EVP_CTRL_GCM_GET_TAG, Int32(AES.GCM.tagByteCount), output.baseAddress! + plaintext.count),
      "EVP_CIPHER_CTX_ctrl(GET_TAG)")
  }

  /// Opens chunk `index` (ciphertext then 16-byte tag) into `output`
  /// (`sealed.count - 16` bytes). Returns false, with `output` wiped, when
  /// the tag does not verify; plaintext is usable only after `true`.
  func open(_ sealed: UnsafeRawBufferPointer, index: UInt64, into output: UnsafeMutableRawBufferPointer) throws -> Bool
  {
    let count = sealed.count - AES.GCM.tagByteCount
    precondition(!encrypting && count >= 0 && output.count == count)
    try setNonce(index: index)
    if count > 0 {
      var written: Int32 = 0
      try check(
        EVP_CipherUpdate(
          context, output.bindMemory(to: UInt8.self).baseAddress, &written,
          sealed.bindMemory(to: UInt8.self).baseAddress, Int32(count)), "EVP_DecryptUpdate")
    }
    // SET_TAG takes a non-const pointer but only reads from it.
    try check(
      EVP_CIPHER_CTX_ctrl(
        context, EVP_CTRL_GCM_SET_TAG, Int32(AES.GCM.tagByteCount),
        UnsafeMutableRawPointer(mutating: sealed.baseAddress! + count)),
      "EVP_CIPHER_CTX_ctrl(SET_TAG)")
    var finalLength: Int32 = 0
    // EVP_DecryptFinal_ex returns <= 0 exactly when the tag does not verify.
    guard EVP_CipherFinal_ex(context, &scratch, &finalLength) > 0 else {
      ERR_clear_error()
      wipe(output)
      return false
    }
    return true
  }

  /// Whether `sealed` authenticates as chunk `index`; the plaintext is
  /// decrypted into a scratch buffer and wiped. For diagnosing a failure.
  func authenticates(_ sealed: UnsafeRawBufferPointer, index: UInt64, scratch: UnsafeMutableRawBufferPointer) -> Bool {
    let count = sealed.count - AES.GCM.tagByteCount
    let target = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<count])
    defer { wipe(target) }
    return (try? open(sealed, index: index, into: target)) == true
  }

  private func check(_ result: Int32, _ function: String) throws {
    guard result == 1 else {
      ERR_clear_error()
      throw TaskCryptoError.backendFailure(function: function)
    }
  }
}
