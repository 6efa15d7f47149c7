import Glibc

extension FileDescriptor {
  /// Reads exactly `buffer.count` bytes at `offset` with `pread(2)`,
  /// retried on EINTR and short counts, without moving the file offset:
  /// random access into a large file (attachment range reads).
  ///
  /// - Throws: `SystemError.failed` with the call `pread` (EIO when the
  ///   file ends before the range does).
  public func read(into buffer: UnsafeMutableRawBufferPointer, atOffset offset: UInt64) throws {
    var done = 0
    while done < buffer.count {
      let count = try retrying("pread", name) {
        Glibc.pread(rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
      }
      if count == 0 { throw SystemError.failed(call: "pread", path: name, errno: EIO) }
      done += count
    }
  }
}
