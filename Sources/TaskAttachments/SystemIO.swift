// The one file of TaskAttachments that calls libc. It moves to TaskSystem's
// file-system seam once that module is on main; nothing else here imports
// Glibc.
import Glibc
import TaskCrypto

/// EINTR-safe system calls with typed errors, and the fault seam tests use
/// to make any step fail.
enum SystemIO {
  /// Test seam: returns an errno to make the named call fail on a path.
  nonisolated(unsafe) static var fault: ((_ call: String, _ path: String) -> Int32?)?

  private static func check(_ call: String, _ path: String) throws {
    if let code = fault?(call, path) { throw AttachmentError.io(call: call, path: path, errno: code) }
  }

  @discardableResult
  private static func retrying<T: BinaryInteger>(_ call: String, _ path: String, _ body: () -> T) throws -> T {
    try check(call, path)
    while true {
      let result = body()
      if result >= 0 { return result }
      let code = errno
      if code == EINTR { continue }
      throw AttachmentError.io(call: call, path: path, errno: code)
    }
  }

  /// Reads up to `buffer.count` bytes; 0 only at the end.
  static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, name: String) throws -> Int {
    guard buffer.count > 0 else { return 0 }
    return try retrying("read", name) { Glibc.read(fd, buffer.baseAddress, buffer.count) }
  }

  /// Reads exactly `buffer.count` bytes at `offset`, or fails.
  static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64, name: String) throws {
    var done = 0
    while done < buffer.count {
      let got = try retrying("pread", name) {
        Glibc.pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
      }
      if got == 0 { throw AttachmentError.io(call: "pread", path: name, errno: EIO) }
      done += got
    }
  }

  /// Writes all of `bytes`.
  static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, name: String) throws {
    var done = 0
    while done < bytes.count {
      done += try retrying("write", name) { Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done) }
    }
  }

  /// Opens an existing file for reading; returns the descriptor and, for a
  /// regular file, its size.
  static func openForReading(_ path: String) throws -> (fd: Int32, size: UInt64?) {
    let fd = try retrying("open", path) { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
      let code = errno
      Glibc.close(fd)
      throw AttachmentError.io(call: "fstat", path: path, errno: code)
    }
    return (fd, info.st_mode & S_IFMT == S_IFREG ? UInt64(info.st_size) : nil)
  }

  /// Whether anything (even a dangling symlink) has this name.
  static func exists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
  }

  /// Creates a new, empty, owner-only temporary file beside `path`
  /// (`.<name>.taskkey-<random>`), never following or replacing a name.
  static func createTemporary(beside path: String) throws -> (fd: Int32, path: String) {
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { String(path[...$0]) } ?? ""
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    let suffix = SecureRandom.bytes(count: 8).map { String($0, radix: 16) }.joined()
    let temporary = "\(directory).\(name).taskkey-\(suffix)"
    let fd = try retrying("open", temporary) {
      Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    }
    return (fd, temporary)
  }

  /// Flushes a file to stable storage.
  static func fsync(_ fd: Int32, path: String) throws {
    try retrying("fsync", path) { Glibc.fsync(fd) }
  }

  /// Closes a descriptor; it is released even when this throws.
  static func close(_ fd: Int32, path: String) throws {
    try check("close", path)
    guard Glibc.close(fd) == 0 else { throw AttachmentError.io(call: "close", path: path, errno: errno) }
  }

  /// Gives `from` the name `to` without replacing anything there (a hard
  /// link, then the old name removed).
  static func linkNew(_ from: String, to: String) throws {
    do {
      try retrying("link", to) { Glibc.link(from, to) }
    } catch AttachmentError.io(_, _, EEXIST) {
      throw AttachmentError.destinationExists(path: to)
    }
    try unlink(from)
  }

  /// Atomically gives `from` the name `to`, replacing what was there.
  static func rename(_ from: String, to: String) throws {
    try retrying("rename", to) { Glibc.rename(from, to) }
  }

  /// Removes a name; a missing name is not an error.
  static func unlink(_ path: String) throws {
    try check("unlink", path)
    while Glibc.unlink(path) != 0 {
      if errno == EINTR { continue }
      if errno == ENOENT { return }
      throw AttachmentError.io(call: "unlink", path: path, errno: errno)
    }
  }

  /// Flushes the directory holding `path`, so a new name survives a crash.
  static func fsyncDirectory(of path: String) throws {
    let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "."
    let fd = try retrying("open", directory) { Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    defer { Glibc.close(fd) }
    try retrying("fsync", directory) { Glibc.fsync(fd) }
  }

  /// Whether `fd` is a terminal.
  static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }
}
