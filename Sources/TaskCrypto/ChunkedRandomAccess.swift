import FoundationEssentials

extension ChunkedEncryption {
  /// Reads any byte range of a sealed message by decrypting only the
  /// chunks it touches.
  ///
  /// Opening checks the header's commitment, checks that the sealed length
  /// is one the format can produce, and authenticates the final chunk at
  /// its computed position, so `plaintextByteCount` is authenticated before
  /// the first read: a truncated or extended message is refused here, not
  /// at the end of a read. Memory stays at one chunk.
  public final class RandomAccessOpener {
    /// Reads exactly `buffer.count` sealed bytes at `offset`, or throws.
    public typealias Reader = (_ offset: UInt64, _ buffer: UnsafeMutableRawBufferPointer) throws -> Void

    /// The authenticated length of the message's plaintext.
    public let plaintextByteCount: UInt64
    private let read: Reader
    private let headerCount: UInt64
    private let chunkCount: UInt64
    private let cipher: ChunkCipher
    private let sealed: UnsafeMutableRawBufferPointer
    private let plain: UnsafeMutableRawBufferPointer

    /// Opens a sealed message of `sealedByteCount` bytes reachable through
    /// `reader`.
    ///
    /// - Parameters:
    ///   - key: the 256-bit input key.
    ///   - context: the exact context bytes given when sealing.
    ///   - sealedByteCount: the sealed message's size (the file size).
    ///   - reader: reads sealed bytes at an offset; kept for later reads.
    /// - Throws: `TaskCryptoError.truncatedHeader`, `.commitmentMismatch`,
    ///   `.missingFinalChunk`, `.truncatedChunk`,
    ///   `.finalChunkAuthenticationFailed`, `.trailingData`, `.tooLarge`,
    ///   or the reader's errors.
    public convenience init<Context: ContiguousBytes>(
      key: SymmetricKey, context: Context, sealedByteCount: UInt64, reader: @escaping Reader
    ) throws {
      let headerCount = ChunkedEncryption.headerByteCount
      guard sealedByteCount >= UInt64(headerCount) else {
        throw TaskCryptoError.truncatedHeader(byteCount: Int(sealedByteCount))
      }
      var header = [UInt8](repeating: 0, count: headerCount)
      try header.withUnsafeMutableBytes { try reader(0, $0) }
      let keys = MessageKeys(
        inputKey: key, salt: Array(header[..<ChunkedEncryption.saltByteCount]), context: context)
      guard ConstantTime.equals(keys.commitment, header[ChunkedEncryption.saltByteCount...]) else {
        throw TaskCryptoError.commitmentMismatch
      }
      try self.init(keys: keys, headerCount: headerCount, sealedByteCount: sealedByteCount, reader: reader)
    }

    /// Raw mode: no header; the key and base nonce come from a
    /// higher-level protocol. Package seam, for the published vectors.
    package convenience init(
      rawKey: SymmetricKey, baseNonce: [UInt8], sealedByteCount: UInt64, reader: @escaping Reader
    ) throws {
      let keys = MessageKeys(rawKey: rawKey, baseNonce: baseNonce)
      try self.init(keys: keys, headerCount: 0, sealedByteCount: sealedByteCount, reader: reader)
    }

    private init(keys: MessageKeys, headerCount: Int, sealedByteCount: UInt64, reader: @escaping Reader) throws {
      let payload = sealedByteCount - UInt64(headerCount)
      self.plaintextByteCount = try ChunkedEncryption.plaintextByteCount(payloadByteCount: payload)
      self.chunkCount = payload / UInt64(ChunkedEncryption.sealedChunkByteCount) + 1
      self.read = reader
      self.headerCount = UInt64(headerCount)
      self.cipher = try keys.cipher(encrypting: false)
      self.sealed = .allocate(byteCount: ChunkedEncryption.sealedChunkByteCount, alignment: 16)
      self.plain = .allocate(byteCount: ChunkedEncryption.chunkByteCount, alignment: 16)
      try authenticateFinalChunk()
    }

    deinit {
      wipe(plain)
      plain.deallocate()
      sealed.deallocate()
    }

    /// Decrypts the final chunk at its computed index; on failure, names
    /// appended data when the real final chunk is found before it
    /// (docs/formats/attachment.md, "Refining a failure", rule 4).
    private func authenticateFinalChunk() throws {
      let last = chunkCount - 1
      do {
        _ = try openChunk(last)
      } catch TaskCryptoError.finalChunkAuthenticationFailed(let index) where last > 0 {
        defer { wipe(plain) }
        // Appended bytes longer than a chunk move the computed final chunk;
        // the real one then starts the chunk before it.
        let full = try readChunk(last - 1)
        if ChunkDiagnosis.endsEarly(full, index: last - 1, cipher: cipher, scratch: plain) {
          throw TaskCryptoError.trailingData(afterChunkIndex: last - 1)
        }
        // Whole chunks appended: the real final chunk has the computed
        // final chunk's length and starts an earlier chunk.
        let length = Int(plaintextByteCount % UInt64(ChunkedEncryption.chunkByteCount)) + AES.GCM.tagByteCount
        let lowest = last > ChunkDiagnosis.searchWindow ? last - ChunkDiagnosis.searchWindow : 0
        var candidate = last - 1
        while candidate > lowest {
          candidate -= 1
          let piece = try readChunk(candidate)
          let prefix = UnsafeRawBufferPointer(rebasing: piece[0..<length])
          if cipher.authenticates(prefix, index: candidate, scratch: plain) {
            throw TaskCryptoError.trailingData(afterChunkIndex: candidate)
          }
        }
        throw TaskCryptoError.finalChunkAuthenticationFailed(chunkIndex: index)
      }
    }

    private func readChunk(_ index: UInt64) throws -> UnsafeRawBufferPointer {
      let full = UInt64(ChunkedEncryption.sealedChunkByteCount)
      let start = headerCount + index * full
      let isFinal = index == chunkCount - 1
      let count =
        isFinal
        ? Int(plaintextByteCount % UInt64(ChunkedEncryption.chunkByteCount)) + AES.GCM.tagByteCount : Int(full)
      let target = UnsafeMutableRawBufferPointer(rebasing: sealed[0..<count])
      try read(start, target)
      return UnsafeRawBufferPointer(target)
    }

    /// Reads and opens chunk `index` into `plain`; returns its plaintext
    /// length.
    private func openChunk(_ index: UInt64) throws -> Int {
      let chunk = try readChunk(index)
      let count = chunk.count - AES.GCM.tagByteCount
      guard try cipher.open(chunk, index: index, into: UnsafeMutableRawBufferPointer(rebasing: plain[0..<count])) else {
        throw ChunkDiagnosis.cause(
          of: chunk, index: index, isFinal: index == chunkCount - 1, chunkCount: chunkCount, cipher: cipher)
      }
      return count
    }

    /// Fills `buffer` with the plaintext bytes at `offset`, decrypting only
    /// the chunks they lie in.
    ///
    /// - Parameters:
    ///   - offset: the first plaintext byte to read.
    ///   - buffer: receives exactly `buffer.count` bytes.
    /// - Throws: `TaskCryptoError.rangeOutOfBounds` when the range does not
    ///   lie inside the message; a chunk's authentication error, with
    ///   `buffer` wiped; the reader's errors.
    public func read(offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws {
      let length = UInt64(buffer.count)
      guard offset <= plaintextByteCount, length <= plaintextByteCount - offset else {
        throw TaskCryptoError.rangeOutOfBounds(offset: offset, length: length, messageByteCount: plaintextByteCount)
      }
      let size = UInt64(ChunkedEncryption.chunkByteCount)
      var done = 0
      do {
        while done < buffer.count {
          let position = offset + UInt64(done)
          let index = position / size
          let within = Int(position % size)
          let available = try openChunk(index)
          let take = Swift.min(available - within, buffer.count - done)
          UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + take)])
            .copyMemory(from: UnsafeRawBufferPointer(rebasing: plain[within..<(within + take)]))
          done += take
        }
      } catch {
        wipe(buffer)
        throw error
      }
      wipe(plain)
    }

    /// Returns `count` plaintext bytes at `offset`.
    ///
    /// - Throws: as `read(offset:into:)`.
    public func read(offset: UInt64, count: Int) throws -> [UInt8] {
      var bytes = [UInt8](repeating: 0, count: count)
      try bytes.withUnsafeMutableBytes { try read(offset: offset, into: $0) }
      return bytes
    }
  }
}
