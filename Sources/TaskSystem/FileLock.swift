import Glibc

/// An exclusive or shared `flock` on a lock file, held until `release()`
/// or until the value goes away. The lock file is created 0600 when
/// missing; a symlink or another user's file is refused.
public final class FileLock {
  private var fd: Int32

  /// Opens (creating 0600 if needed) and locks `path`, waiting for other
  /// holders.
  ///
  /// - Throws: `SystemError.wrongFileType` (a symlink), `.notOwner`,
  ///   `.failed` naming `open` or `flock`.
  public init(path: String, exclusive: Bool) throws {
    var fd = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    while fd < 0 && errno == EINTR { fd = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600) }
    guard fd >= 0 else {
      if errno == ELOOP { throw SystemError.wrongFileType(path: path, expected: "a regular file (it is a symlink)") }
      throw SystemError.failed(call: "open", path: path, errno: errno)
    }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_uid == getuid() else {
      Glibc.close(fd)
      throw SystemError.notOwner(path: path)
    }
    do {
      try retrying("flock", path) { flock(fd, exclusive ? LOCK_EX : LOCK_SH) }
    } catch {
      Glibc.close(fd)
      throw error
    }
    self.fd = fd
  }

  /// Runs `body` holding an exclusive lock on `path`.
  ///
  /// - Throws: the errors of `init(path:exclusive:)` and what `body` throws.
  public static func withExclusive<Result>(_ path: String, _ body: () throws -> Result) throws -> Result {
    let lock = try FileLock(path: path, exclusive: true)
    defer { lock.release() }
    return try body()
  }

  /// Releases the lock.
  public func release() {
    guard fd >= 0 else { return }
    Glibc.close(fd)  // closing drops the flock
    fd = -1
  }

  deinit { release() }
}
