import COpenSSL

/// One message's AES-256-GCM state for chunked encryption: the derived key
/// set once in a reused `EVP_CIPHER_CTX` (its key schedule is computed
/// once), and each chunk sealed or opened by setting only its nonce.
///
/// Nonce of chunk i = base nonce XOR i, as a big-endian integer as wide as
/// the nonce (c2sp.org/chunked-encryption, "AEAD usage"). The AAD is empty.
/// The hot path works on raw buffers owned here, so that a 16 KiB chunk
/// costs little more than OpenSSL's own work.
final class ChunkCipher {
  private let context: OpaquePointer
  private let encrypting: Bool
  /// The first 4 bytes of the base nonce, then its last 8 as a big-endian
  /// integer that the index is XORed into.
  private let nonceHead: UInt32
  private let nonceTail: UInt64
  /// The current nonce (12 bytes) and a 16-byte scratch for EVP's final.
  private let buffer: UnsafeMutableRawPointer

  /// Sets `key` (32 bytes) in a fresh context for sealing or opening.
  init(key: UnsafeRawBufferPointer, baseNonce: [UInt8], encrypting: Bool) throws {
    precondition(key.count == SymmetricKey.byteCount && baseNonce.count == AES.GCM.nonceByteCount)
    guard let context = EVP_CIPHER_CTX_new() else {
      throw TaskCryptoError.backendFailure(function: "EVP_CIPHER_CTX_new")
    }
    self.context = context
    self.encrypting = encrypting
    self.nonceHead = baseNonce[0..<4].reduce(0) { $0 << 8 | UInt32($1) }
    self.nonceTail = baseNonce[4..<12].reduce(0) { $0 << 8 | UInt64($1) }
    self.buffer = .allocate(byteCount: 32, alignment: 16)
    let result = EVP_CipherInit_ex(
      context, EVP_aes_256_gcm(), nil, key.bindMemory(to: UInt8.self).baseAddress, nil, encrypting ? 1 : 0)
    guard result == 1 else {
      ERR_clear_error()
      EVP_CIPHER_CTX_free(context)
      buffer.deallocate()
      throw TaskCryptoError.backendFailure(function: "EVP_CipherInit_ex")
    }
  }

  deinit {
    // EVP_CIPHER_CTX_free cleanses the key schedule.
    EVP_CIPHER_CTX_free(context)
    buffer.initializeMemory(as: UInt8.self, repeating: 0, count: 32)
    buffer.deallocate()
  }

  /// Sets the nonce of chunk `index`: the base nonce with its last 5 bytes
  /// XORed with the index as a big-endian 38-bit integer.
  @inline(__always)
  private func setNonce(index: UInt64) throws {
    precondition(index < ChunkedEncryption.maximumChunkCount)
    buffer.storeBytes(of: nonceHead.bigEndian, toByteOffset: 0, as: UInt32.self)
    buffer.storeBytes(of: (nonceTail ^ index).bigEndian, toByteOffset: 4, as: UInt64.self)
    let iv = buffer.assumingMemoryBound(to: UInt8.self)
    try check(EVP_CipherInit_ex(context, nil, nil, nil, iv, -1), "EVP_CipherInit_ex(nonce)")
  }

  /// Seals chunk `index`: writes `plaintext.count + 16` bytes to `output`
  /// (ciphertext, then tag).
  func seal(_ plaintext: UnsafeRawBufferPointer, index: UInt64, into output: UnsafeMutableRawBufferPointer) throws {
    precondition(encrypting && output.count == plaintext.count + AES.GCM.tagByteCount)
    try setNonce(index: index)
    var written: Int32 = 0
    if plaintext.count > 0 {
      try check(
        EVP_CipherUpdate(
          context, output.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
          plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(plaintext.count)), "EVP_EncryptUpdate")
    }
    try check(
      EVP_CipherFinal_ex(context, (buffer + 16).assumingMemoryBound(to: UInt8.self), &written), "EVP_EncryptFinal_ex")
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
    var written: Int32 = 0
    if count > 0 {
      try check(
        EVP_CipherUpdate(
          context, output.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
          sealed.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(count)), "EVP_DecryptUpdate")
    }
    // SET_TAG takes a non-const pointer but only reads from it.
    try check(
      EVP_CIPHER_CTX_ctrl(
        context, EVP_CTRL_GCM_SET_TAG, Int32(AES.GCM.tagByteCount),
        UnsafeMutableRawPointer(mutating: sealed.baseAddress! + count)),
      "EVP_CIPHER_CTX_ctrl(SET_TAG)")
    // EVP_DecryptFinal_ex returns <= 0 exactly when the tag does not verify.
    guard EVP_CipherFinal_ex(context, (buffer + 16).assumingMemoryBound(to: UInt8.self), &written) > 0 else {
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

  @inline(__always)
  private func check(_ result: Int32, _ function: String) throws {
    guard result == 1 else {
      ERR_clear_error()
      throw TaskCryptoError.backendFailure(function: function)
    }
  }
}

extension ChunkedEncryption {
  /// Cuts a stream into whole chunks of `size` bytes, for the sealer
  /// (plaintext chunks) and the opener (sealed chunks): bytes wait in
  /// `pending` until a chunk is whole, whole chunks inside `bytes` are handed
  /// on without a copy, and the rest (under `size`) waits in `pending` for
  /// the next call.
  ///
  /// - Parameters:
  ///   - bytes: the next bytes of the stream, from `start` on.
  ///   - pending: a buffer of at least `size` bytes, holding `pendingCount`
  ///     bytes carried over from the last call.
  ///   - chunk: receives each whole chunk in order; valid only during the call.
  static func cutIntoChunks(
    _ bytes: UnsafeRawBufferPointer, from start: Int, size: Int, pending: UnsafeMutableRawBufferPointer,
    pendingCount: inout Int, chunk: (UnsafeRawBufferPointer) throws -> Void
  ) rethrows {
    var offset = start
    if pendingCount > 0 {
      let take = Swift.min(size - pendingCount, bytes.count - offset)
      UnsafeMutableRawBufferPointer(rebasing: pending[pendingCount..<(pendingCount + take)])
        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)]))
      pendingCount += take
      offset += take
      guard pendingCount == size else { return }
      try chunk(UnsafeRawBufferPointer(rebasing: pending[0..<size]))
      pendingCount = 0
    }
    while bytes.count - offset >= size {
      try chunk(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)]))
      offset += size
    }
    let rest = bytes.count - offset
    if rest > 0 {
      UnsafeMutableRawBufferPointer(rebasing: pending[0..<rest])
        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset...]))
      pendingCount = rest
    }
  }
}
