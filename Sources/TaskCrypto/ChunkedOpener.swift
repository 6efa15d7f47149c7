import FoundationEssentials

extension ChunkedEncryption {
  /// Streams a sealed message back to plaintext with constant memory.
  ///
  /// Feed the sealed bytes (header first) in pieces of any size with
  /// `update`, then call `finish` once at the end of the input. The header's
  /// commitment is checked as soon as its 56 bytes are in, before any chunk
  /// is decrypted. `emit` receives plaintext only from chunks whose tags
  /// verified, in order.
  ///
  /// A stream can fail after a valid prefix was emitted (a truncated or
  /// altered later chunk): treat the output as unusable until `finish`
  /// returns. Once it has failed, every later call fails with the same
  /// error; it never turns into a clean end.
  ///
  /// The checks run in the order of docs/formats/attachment.md, as a
  /// reader that knows the length first: the length of what follows the
  /// last whole chunk (step 7) is decided before a whole chunk's failure
  /// (step 8). So a whole chunk that fails is not reported by `update`:
  /// nothing is emitted from it on, the rest of the input is only counted,
  /// and `finish` reports `missingFinalChunk` or `truncatedChunk` when the
  /// input's length says so, else that chunk's failure.
  public final class Opener {
    private let inputKey: SymmetricKey?
    private let context: [UInt8]
    private var cipher: ChunkCipher?
    private var header = [UInt8]()
    private let sealed: UnsafeMutableRawBufferPointer
    private var sealedCount = 0
    /// One chunk of plaintext, handed to `emit` as soon as its tag verified:
    /// a 16 KiB buffer stays in cache while the sealed input streams past
    /// (gathering 256 KiB before emitting opened large files at 0.88 of the
    /// floor's throughput, one chunk at 0.93-0.96 in `make bench`).
    private let output: UnsafeMutableRawBufferPointer
    /// The index of the next chunk; internal so that tests can start near
    /// the counter's limits.
    var chunkIndex: UInt64 = 0
    private var failure: TaskCryptoError?
    /// The first whole chunk that failed; `finish` reports it unless the
    /// input's length is refused first.
    private var chunkFailure: TaskCryptoError?
    private var finished = false

    /// Prepares to open a message sealed under `key` for `context`.
    ///
    /// - Parameters:
    ///   - key: the 256-bit input key.
    ///   - context: the exact context bytes given when sealing.
    /// - Throws: nothing today; kept for allocation failures.
    public init<Context: ContiguousBytes>(key: SymmetricKey, context: Context) throws {
      self.inputKey = key
      self.context = context.withUnsafeBytes { Array($0) }
      self.sealed = .allocate(byteCount: ChunkedEncryption.sealedChunkByteCount, alignment: 16)
      self.output = .allocate(byteCount: ChunkedEncryption.chunkByteCount, alignment: 16)
    }

    /// Raw mode (the standard's appendix): no header; the key and base
    /// nonce come from a higher-level protocol. Package seam: no TaskKey
    /// format uses raw mode; the published vectors check it.
    package init(rawKey: SymmetricKey, baseNonce: [UInt8]) throws {
      self.inputKey = nil
      self.context = []
      self.sealed = .allocate(byteCount: ChunkedEncryption.sealedChunkByteCount, alignment: 16)
      self.output = .allocate(byteCount: ChunkedEncryption.chunkByteCount, alignment: 16)
      self.cipher = try MessageKeys(rawKey: rawKey, baseNonce: baseNonce).cipher(encrypting: false)
    }

    deinit {
      // Verified plaintext already handed to `emit` is not wiped again here;
      // unverified plaintext never survives a failed tag (ChunkCipher.open
      // wipes it) and `fail` wipes the buffer.
      output.deallocate()
      sealed.deallocate()
    }

    /// Takes the next sealed bytes, checks the header once it is complete,
    /// and opens every chunk they complete.
    ///
    /// - Parameters:
    ///   - bytes: the next sealed bytes, any number.
    ///   - emit: receives verified plaintext in order; valid only during
    ///     the call.
    /// - Throws: `TaskCryptoError.commitmentMismatch` (wrong key or context,
    ///   altered header), `.tooLarge`, or errors of `emit`; then the same
    ///   error on every later call. A whole chunk's failure is reported by
    ///   `finish`.
    public func update(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
      precondition(!finished, "ChunkedEncryption.Opener used after finish")
      if let failure { throw failure }
      do {
        try consume(bytes, emit: emit)
      } catch let error as TaskCryptoError {
        fail(error)
        throw error
      }
    }

    /// Opens `bytes` as `update(_:emit:)` does.
    ///
    /// - Throws: as `update(_:emit:)`.
    public func update<Bytes: ContiguousBytes>(_ bytes: Bytes, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
      try bytes.withUnsafeBytes { try update($0, emit: emit) }
    }

    /// Ends the input: opens the final chunk and emits what is left.
    ///
    /// - Throws: `TaskCryptoError.truncatedHeader`, `.missingFinalChunk`,
    ///   `.truncatedChunk`, then a whole chunk's failure
    ///   (`.chunkAuthenticationFailed`, `.chunkOutOfPlace`, `.trailingData`),
    ///   then `.finalChunkAuthenticationFailed` or `.trailingData` for the
    ///   final chunk, in that order; any earlier error.
    public func finish(emit: (UnsafeRawBufferPointer) throws -> Void) throws {
      if let failure { throw failure }
      precondition(!finished, "ChunkedEncryption.Opener finished twice")
      do {
        guard let cipher else { throw TaskCryptoError.truncatedHeader(byteCount: header.count) }
        if sealedCount == 0 { throw TaskCryptoError.missingFinalChunk(chunkIndex: chunkIndex) }
        if sealedCount < AES.GCM.tagByteCount {
          throw TaskCryptoError.truncatedChunk(chunkIndex: chunkIndex, byteCount: sealedCount)
        }
        if let chunkFailure { throw chunkFailure }
        let piece = UnsafeRawBufferPointer(rebasing: sealed[0..<sealedCount])
        let plainCount = sealedCount - AES.GCM.tagByteCount
        let target = UnsafeMutableRawBufferPointer(rebasing: output[0..<plainCount])
        guard try cipher.open(piece, index: chunkIndex, into: target) else {
          throw ChunkDiagnosis.cause(of: piece, index: chunkIndex, isFinal: true, chunkCount: nil, cipher: cipher)
        }
        finished = true
        // An empty final chunk emits nothing.
        if plainCount > 0 { try emit(UnsafeRawBufferPointer(target)) }
      } catch let error as TaskCryptoError {
        fail(error)
        throw error
      }
    }

    private func fail(_ error: TaskCryptoError) {
      failure = error
      wipe(output)
    }

    private func consume(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
      var offset = 0
      if cipher == nil {
        let take = Swift.min(ChunkedEncryption.headerByteCount - header.count, bytes.count)
        header += UnsafeRawBufferPointer(rebasing: bytes[0..<take])
        offset = take
        guard header.count == ChunkedEncryption.headerByteCount else { return }
        try checkHeader()
      }
      // A whole 16 400-byte chunk is never the final one, so it can be
      // opened at once (its failure waits for the length, step 7); the
      // final chunk is known only at `finish`.
      try ChunkedEncryption.cutIntoChunks(
        bytes, from: offset, size: ChunkedEncryption.sealedChunkByteCount, pending: sealed, pendingCount: &sealedCount
      ) { try openFullChunk($0, emit: emit) }
    }

    /// Derives the message keys from the salt and compares the commitment
    /// in constant time, before any chunk is touched.
    private func checkHeader() throws {
      guard let inputKey else { return }
      let salt = Array(header[0..<ChunkedEncryption.saltByteCount])
      let keys = MessageKeys(inputKey: inputKey, salt: salt, context: context)
      guard ConstantTime.equals(keys.commitment, header[ChunkedEncryption.saltByteCount...]) else {
        throw TaskCryptoError.commitmentMismatch
      }
      cipher = try keys.cipher(encrypting: false)
    }

    private func openFullChunk(_ chunk: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
      guard let cipher else { preconditionFailure("chunk before header") }
      guard chunkIndex + 1 < ChunkedEncryption.maximumChunkCount else {
        throw TaskCryptoError.tooLarge(byteCount: Int.max, limit: Int(ChunkedEncryption.maximumChunkCount))
      }
      // After a failed chunk the rest is only counted, for step 7.
      guard chunkFailure == nil else {
        chunkIndex += 1
        return
      }
      guard try cipher.open(chunk, index: chunkIndex, into: output) else {
        chunkFailure = ChunkDiagnosis.cause(
          of: chunk, index: chunkIndex, isFinal: false, chunkCount: nil, cipher: cipher)
        wipe(output)
        chunkIndex += 1
        return
      }
      chunkIndex += 1
      // Not wiped after `emit`: the next chunk overwrites it.
      try emit(UnsafeRawBufferPointer(output))
    }
  }
}
