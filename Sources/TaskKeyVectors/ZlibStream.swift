import CZlib

/// Reads zlib streams (RFC 1950) with Debian's zlib, for the published
/// chunked-encryption vectors (Wycheproof's Cobblestone file), whose
/// ciphertexts are zlib-compressed to keep the file small. Nothing on an
/// attachment, key or vault path decompresses anything; this is the only
/// caller of zlib in the package, and no shipped library links it.
///
/// Guarantees: a stream is returned only when zlib reached its end marker
/// and its Adler-32 checksum matched, with no byte after it; the output is
/// capped, so a hostile vector file cannot exhaust memory.
enum ZlibStream {
  /// The most a vector's ciphertext may decompress to by default (64 MiB).
  static let defaultLimit = 64 << 20

  /// How much zlib is asked to write per call.
  private static let chunkByteCount = 64 << 10

  /// Decompresses one whole zlib stream.
  ///
  /// - Parameters:
  ///   - bytes: the stream: header, DEFLATE blocks, Adler-32.
  ///   - limit: the most bytes the output may hold.
  /// - Returns: the decompressed bytes.
  /// - Throws: `VectorCheckError.corruptCompressedStream` (zlib's own
  ///   message: a bad header, bad blocks, a wrong checksum),
  ///   `.truncatedCompressedStream`, `.trailingCompressedBytes`,
  ///   `.decompressedTooLarge`.
  static func decompress(_ bytes: [UInt8], limit: Int = defaultLimit) throws -> [UInt8] {
    var stream = z_stream()
    let started = inflateInit_(&stream, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
    guard started == Z_OK else { throw VectorCheckError.corruptCompressedStream(detail: "inflateInit: \(started)") }
    defer { inflateEnd(&stream) }
    let chunk = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: chunkByteCount)
    defer { chunk.deallocate() }
    var output = [UInt8]()
    return try bytes.withUnsafeBufferPointer { input in
      stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
      stream.avail_in = UInt32(input.count)
      var status: Int32
      repeat {
        stream.next_out = chunk.baseAddress
        stream.avail_out = UInt32(chunk.count)
        status = inflate(&stream, Z_NO_FLUSH)
        let produced = chunk.count - Int(stream.avail_out)
        guard output.count + produced <= limit else { throw VectorCheckError.decompressedTooLarge(limit: limit) }
        output += chunk[..<produced]
      } while status == Z_OK
      switch status {
      case Z_STREAM_END:
        guard stream.avail_in == 0 else {
          throw VectorCheckError.trailingCompressedBytes(count: Int(stream.avail_in))
        }
        return output
      case Z_BUF_ERROR:
        // No progress possible: the input ended before the end marker.
        throw VectorCheckError.truncatedCompressedStream
      default:
        let detail = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
        throw VectorCheckError.corruptCompressedStream(detail: detail)
      }
    }
  }
}
