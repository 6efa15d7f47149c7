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

extension FileDescriptor {
  /// Writes all of `bytes` at `offset` with `pwrite(2)`, retried on EINTR
  /// and short counts, without moving the file offset and without fsync:
  /// an in-place update of a few bytes (the assistant last-used slots),
  /// which a crash may leave torn.
  ///
  /// - Throws: `SystemError.failed` with the call `pwrite`.
  public func write(_ bytes: [UInt8], atOffset offset: UInt64) throws {
    try bytes.withUnsafeBytes { buffer in
      var done = 0
      while done < buffer.count {
        done += try retrying("pwrite", name) {
          Glibc.pwrite(rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
        }
      }
    }
  }
}

extension OpenFile {
  /// Opens an existing owner-only file (the checks of `ownerOnly(_:)`) for
  /// reading and in-place writing (`FileDescriptor.write(_:atOffset:)`).
  ///
  /// - Returns: the open file, or nil when nothing exists at `path`.
  /// - Throws: the errors of `ownerOnly(_:)`.
  public static func ownerOnlyForUpdate(_ path: String) throws -> OpenFile? {
    try ownerOnly(path, flags: O_RDWR)
  }
}
