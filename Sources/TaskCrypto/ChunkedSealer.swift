import FoundationEssentials

extension ChunkedEncryption {
  /// Streams a message into the chunked format with constant memory.
  ///
  /// Feed plaintext in pieces of any size with `update`, then call
  /// `finish` once. The sealed bytes, starting with the 56-byte header, are
  /// handed to `emit` in order, in batches of at most about 256 KiB; write
  /// them as they come. Memory stays at one chunk of plaintext plus one
  /// batch, whatever the message size.
  ///
  /// Each `Sealer` draws a fresh random salt, so every message gets its own
  /// key and base nonce; nothing the caller does can repeat a nonce.
  public final class Sealer {
    /// Sealed full chunks gathered before `emit` is called.
    static let batchChunkCount = 16

    private let cipher: ChunkCipher
    private let plaintext: UnsafeMutableRawBufferPointer
    private var plaintextCount = 0
    private let output: UnsafeMutableRawBufferPointer
    private var outputCount = 0
    /// The index of the next chunk; internal so that tests can start near
    /// the counter's limits.
    var chunkIndex: UInt64 = 0
    private var finished = false

    /// Starts a message under `key`, bound to `context`.
    ///
    /// - Parameters:
    ///   - key: the 256-bit input key.
    ///   - context: where the message belongs (for example the wrapper and
    ///     record of an attachment); the same bytes must be given to open.
    /// - Throws: `TaskCryptoError.resourceUnavailable` or `.backendFailure`.
    public convenience init<Context: ContiguousBytes>(key: SymmetricKey, context: Context) throws {
      try self.init(key: key, context: context, salt: SecureRandom.bytes(count: ChunkedEncryption.saltByteCount))
    }

    /// The package seam: a chosen salt. A repeated salt under one key
    /// repeats the key and nonces; only tests, vector generators and the
    /// vectors target (re-sealing a published vector) call this.
    package convenience init<Context: ContiguousBytes>(key: SymmetricKey, context: Context, salt: [UInt8]) throws {
      let keys = MessageKeys(inputKey: key, salt: salt, context: context)
      try self.init(keys: keys, header: salt + keys.commitment)
    }

    /// Raw mode (the standard's appendix): a key and base nonce from a
    /// higher-level protocol; no header is written. Package seam, for the
    /// published vectors.
    package convenience init(rawKey: SymmetricKey, baseNonce: [UInt8]) throws {
      try self.init(keys: MessageKeys(rawKey: rawKey, baseNonce: baseNonce), header: [])
    }

    private init(keys: MessageKeys, header: [UInt8]) throws {
      self.cipher = try keys.cipher(encrypting: true)
      self.plaintext = .allocate(byteCount: ChunkedEncryption.chunkByteCount, alignment: 16)
      let capacity = ChunkedEncryption.headerByteCount + Self.batchChunkCount * ChunkedEncryption.sealedChunkByteCount
      self.output = .allocate(byteCount: capacity, alignment: 16)
      header.withUnsafeBytes { output.copyMemory(from: $0) }
      self.outputCount = header.count
    }

    deinit {
      wipe(plaintext)
      plaintext.deallocate()
      output.deallocate()
    }

    /// Seals as many whole chunks as `bytes` completes and keeps the rest
    /// (under 16 KiB) for the next call.
    ///
    /// - Parameters:
    ///   - bytes: the next plaintext bytes, any number.
    ///   - emit: receives sealed bytes in order; valid only during the call.
    /// - Throws: `TaskCryptoError.tooLarge` past 2^38 chunks, errors of
    ///   `emit`, `.backendFailure`.
    public func update(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
      precondition(!finished, "ChunkedEncryption.Sealer used after finish")
      try ChunkedEncryption.cutIntoChunks(
        bytes, from: 0, size: ChunkedEncryption.chunkByteCount, pending: plaintext, pendingCount: &plaintextCount
      ) { try sealFullChunk($0, emit: emit) }
    }

    /// Seals `bytes` as `update(_:emit:)` does.
    ///
    /// - Throws: as `update(_:emit:)`.
    public func update<Bytes: ContiguousBytes>(_ bytes: Bytes, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
      try bytes.withUnsafeBytes { try update($0, emit: emit) }
    }

    /// Seals the kept bytes as the final, short chunk (empty when the
    /// message length is a multiple of 16 KiB) and emits everything left.
    /// Call exactly once.
    ///
    /// - Throws: as `update(_:emit:)`.
    public func finish(emit: (UnsafeRawBufferPointer) throws -> Void) throws {
      precondition(!finished, "ChunkedEncryption.Sealer finished twice")
      finished = true
      let sealedCount = plaintextCount + AES.GCM.tagByteCount
      try cipher.seal(
        UnsafeRawBufferPointer(rebasing: plaintext[0..<plaintextCount]), index: chunkIndex,
        into: UnsafeMutableRawBufferPointer(rebasing: output[outputCount..<(outputCount + sealedCount)]))
      outputCount += sealedCount
      wipe(plaintext)
      try flush(emit: emit)
    }

    private func sealFullChunk(_ chunk: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
      // The final chunk comes after this one and needs an index too.
      guard chunkIndex + 1 < ChunkedEncryption.maximumChunkCount else {
        throw TaskCryptoError.tooLarge(
          byteCount: Int.max, limit: Int(ChunkedEncryption.maximumChunkCount) * ChunkedEncryption.chunkByteCount - 1)
      }
      let sealedCount = ChunkedEncryption.sealedChunkByteCount
      try cipher.seal(
        chunk, index: chunkIndex,
        into: UnsafeMutableRawBufferPointer(rebasing: output[outputCount..<(outputCount + sealedCount)]))
      chunkIndex += 1
      outputCount += sealedCount
      if output.count - outputCount < sealedCount { try flush(emit: emit) }
    }

    private func flush(emit: (UnsafeRawBufferPointer) throws -> Void) throws {
      guard outputCount > 0 else { return }
      let count = outputCount
      outputCount = 0
      try emit(UnsafeRawBufferPointer(rebasing: output[0..<count]))
    }
  }
}
