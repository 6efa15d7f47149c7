import Glibc

/// The steps of a durable write, one method each, so tests can fail any of
/// them. Every method retries on EINTR and throws `TaskVaultError.io` with
/// the path, the call and errno.
protocol FileSystem: Sendable {
  /// Creates a new file with `O_CREAT | O_EXCL | O_NOFOLLOW` and mode 0600,
  /// open for writing.
  func createExclusive(_ path: String) throws -> Int32
  /// Writes all bytes, retrying short writes.
  func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws
  /// Flushes a file to stable storage.
  func fsync(_ fd: Int32, path: String) throws
  /// Closes a descriptor; the descriptor is gone even when this throws.
  func close(_ fd: Int32, path: String) throws
  /// Atomically replaces `to` with `from`.
  func rename(_ from: String, _ to: String) throws
  /// Makes a hard link `to` for `from`.
  func link(_ from: String, _ to: String) throws
  /// Removes a name; a missing file is not an error.
  func unlink(_ path: String) throws
  /// Flushes a directory's entries to stable storage.
  func fsyncDirectory(_ path: String) throws
}

/// The real file system.
struct PosixFileSystem: FileSystem {
  func createExclusive(_ path: String) throws -> Int32 {
    try retrying(path, "open") { Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
  }

  func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
    var offset = 0
    while offset < bytes.count {
      let count = try retrying(path, "write") { Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
      offset += count
    }
  }

  func fsync(_ fd: Int32, path: String) throws {
    _ = try retrying(path, "fsync") { Glibc.fsync(fd) }
  }

  func close(_ fd: Int32, path: String) throws {
    // close is never retried: on Linux the descriptor is released even on EINTR.
    guard Glibc.close(fd) == 0 else { throw TaskVaultError.io(path: path, call: "close", errno: errno) }
  }

  func rename(_ from: String, _ to: String) throws {
    _ = try retrying(to, "rename") { Glibc.rename(from, to) }
  }

  func link(_ from: String, _ to: String) throws {
    _ = try retrying(to, "link") { Glibc.link(from, to) }
  }

  func unlink(_ path: String) throws {
    while Glibc.unlink(path) != 0 {
      if errno == EINTR { continue }
      if errno == ENOENT { return }
      throw TaskVaultError.io(path: path, call: "unlink", errno: errno)
    }
  }

  func fsyncDirectory(_ path: String) throws {
    let fd = try retrying(path, "open") { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    defer { Glibc.close(fd) }
    _ = try retrying(path, "fsync") { Glibc.fsync(fd) }
  }
}

/// Calls a syscall until it does not fail with EINTR; a -1 result with any
/// other errno becomes `TaskVaultError.io`.
@discardableResult
func retrying<T: BinaryInteger>(_ path: String, _ call: String, _ body: () -> T) throws -> T {
  while true {
    let result = body()
    if result >= 0 { return result }
    let code = errno
    if code == EINTR { continue }
    throw TaskVaultError.io(path: path, call: call, errno: code)
  }
}

/// What a checked open found.
struct OpenedFile {
  let fd: Int32
  let size: Int
}

/// File checks and reads that do not change anything (not part of the
/// fault-injection seam).
enum Files {
  /// Opens an existing regular file for reading, refusing symlinks, other
  /// owners and group/other permission bits.
  ///
  /// - Returns: nil when the file does not exist.
  static func openPrivate(_ path: String) throws -> OpenedFile? {
    let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    if fd < 0 {
      let code = errno
      if code == ENOENT { return nil }
      if code == ELOOP { throw TaskVaultError.wrongFileType(path: path, expected: "a regular file (it is a symlink)") }
      if code == EINTR { return try openPrivate(path) }
      throw TaskVaultError.io(path: path, call: "open", errno: code)
    }
    do {
      var info = stat()
      guard fstat(fd, &info) == 0 else { throw TaskVaultError.io(path: path, call: "fstat", errno: errno) }
      guard info.st_mode & S_IFMT == S_IFREG else {
        throw TaskVaultError.wrongFileType(path: path, expected: "a regular file")
      }
      guard info.st_uid == getuid() else { throw TaskVaultError.notOwner(path: path) }
      guard info.st_mode & 0o077 == 0 else {
        throw TaskVaultError.loosePermissions(
          path: path, mode: UInt32(info.st_mode & 0o7777), fix: "chmod 600 '\(path)'")
      }
      return OpenedFile(fd: fd, size: Int(info.st_size))
    } catch {
      Glibc.close(fd)
      throw error
    }
  }

  /// Reads a private file whole, refusing files larger than `limit`.
  ///
  /// - Returns: nil when the file does not exist.
  static func readPrivate(_ path: String, limit: Int) throws -> [UInt8]? {
    guard let file = try openPrivate(path) else { return nil }
    defer { Glibc.close(file.fd) }
    guard file.size <= limit else {
      throw TaskVaultError.damaged(path: path, reason: "\(file.size) bytes is more than the limit of \(limit)")
    }
    // One spare byte notices a file that grew after fstat.
    var bytes = [UInt8](repeating: 0, count: file.size + 1)
    var total = 0
    while total < bytes.count {
      let count = try bytes.withUnsafeMutableBytes { buffer in
        try retrying(path, "read") { Glibc.read(file.fd, buffer.baseAddress! + total, buffer.count - total) }
      }
      if count == 0 { break }
      total += count
    }
    guard total <= file.size else {
      throw TaskVaultError.damaged(path: path, reason: "the file grew while it was read")
    }
    bytes.removeSubrange(total...)
    return bytes
  }

  /// Checks a directory that must be private: no symlink owned by another
  /// user on the way, owned by the user, mode without group/other bits.
  ///
  /// - Returns: false when it does not exist.
  static func checkPrivateDirectory(_ path: String) throws -> Bool {
    try checkSymlinks(on: path)
    let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else {
      if errno == ENOENT { return false }
      if errno == ENOTDIR { throw TaskVaultError.wrongFileType(path: path, expected: "a directory") }
      throw TaskVaultError.io(path: path, call: "open", errno: errno)
    }
    defer { Glibc.close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw TaskVaultError.io(path: path, call: "fstat", errno: errno) }
    guard info.st_uid == getuid() else { throw TaskVaultError.notOwner(path: path) }
    guard info.st_mode & 0o077 == 0 else {
      throw TaskVaultError.loosePermissions(path: path, mode: UInt32(info.st_mode & 0o7777), fix: "chmod 700 '\(path)'")
    }
    return true
  }

  /// Refuses a path any of whose components is a symlink owned by neither
  /// the user nor root.
  static func checkSymlinks(on path: String) throws {
    var prefix = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/", omittingEmptySubsequences: true) {
      prefix += "/" + component
      var info = stat()
      guard lstat(prefix, &info) == 0 else { return }  // the rest does not exist yet
      if info.st_mode & S_IFMT == S_IFLNK && info.st_uid != 0 && info.st_uid != getuid() {
        throw TaskVaultError.untrustedSymlink(path: prefix)
      }
    }
  }

  /// Makes a private directory and any missing parents with mode 0700.
  static func makePrivateDirectory(_ path: String) throws {
    try checkSymlinks(on: path)
    var prefix = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/", omittingEmptySubsequences: true) {
      prefix += "/" + component
      if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
        throw TaskVaultError.io(path: prefix, call: "mkdir", errno: errno)
      }
    }
    _ = try checkPrivateDirectory(path)
  }
}

/// An exclusive or shared `flock` on a vault's lock file, held until
/// `release` (or deinit).
final class FileLock {
  private var fd: Int32

  /// Opens (creating 0600 if needed) and locks `path`.
  init(path: String, exclusive: Bool) throws {
    var fd = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    while fd < 0 && errno == EINTR { fd = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600) }
    guard fd >= 0 else {
      if errno == ELOOP { throw TaskVaultError.wrongFileType(path: path, expected: "a regular file (it is a symlink)") }
      throw TaskVaultError.io(path: path, call: "open", errno: errno)
    }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_uid == getuid() else {
      Glibc.close(fd)
      throw TaskVaultError.notOwner(path: path)
    }
    while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 {
      if errno == EINTR { continue }
      let code = errno
      Glibc.close(fd)
      throw TaskVaultError.io(path: path, call: "flock", errno: code)
    }
    self.fd = fd
  }

  /// Releases the lock.
  func release() {
    guard fd >= 0 else { return }
    Glibc.close(fd)  // closing drops the flock
    fd = -1
  }

  deinit { release() }
}
