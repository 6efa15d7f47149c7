import Glibc

/// Overwriting a file's bytes before it is removed, for plaintext that
/// had to be written to a (memory-backed) file: an editor's copy of a note.
public enum FileWipe {
  /// Overwrites the regular file at `path` (not following a symlink) with
  /// zeros over its whole size, syncs it, and removes the name.
  ///
  /// The zeros land in the same file (the same pages, on a tmpfs); copies
  /// made under other names or inodes (an editor that saved by rename)
  /// are not reached.
  ///
  /// - Throws: `SystemError.wrongFileType` for a symlink or non-regular
  ///   file (left in place), `.failed` naming `open`, `fstat`, `write`,
  ///   `fsync` or `unlink`.
  public static func overwriteAndRemove(_ path: String) throws {
    let fd = Glibc.open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else {
      let code = errno
      if code == ELOOP { throw SystemError.wrongFileType(path: path, expected: "a regular file (it is a symlink)") }
      throw SystemError.failed(call: "open", path: path, errno: code)
    }
    defer { Glibc.close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw SystemError.failed(call: "fstat", path: path, errno: errno) }
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw SystemError.wrongFileType(path: path, expected: "a regular file")
    }
    let zeros = [UInt8](repeating: 0, count: 1 << 16)
    var left = Int(info.st_size)
    let file = FileDescriptor(fd, name: path)
    while left > 0 {
      let count = min(left, zeros.count)
      try zeros.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
      left -= count
    }
    _ = try retrying("fsync", path) { fsync(fd) }
    _ = try retrying("unlink", path) { unlink(path) }
  }
}
