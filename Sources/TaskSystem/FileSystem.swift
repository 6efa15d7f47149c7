import Glibc

/// One step of a durable write; the `rawValue` is the call named in a
/// `SystemError` when the step fails.
public enum FileStep: String, CaseIterable, Sendable {
  /// `open(O_CREAT|O_EXCL|O_NOFOLLOW, 0600)` of a new file.
  case createExclusive = "open"
  /// Writing all bytes.
  case write
  /// `fsync` of the file.
  case fsync
  /// `close` of the file.
  case close
  /// `rename` over the target (atomic replacement).
  case rename
  /// `link`: keeping the previous generation under a second name.
  case link
  /// `unlink` of a name.
  case unlink
  /// `fsync` of the directory, so the new name survives a crash.
  case fsyncDirectory = "fsync(directory)"
}

/// The file-system seam: every write of every TaskKey module goes through
/// one of these methods, so a test can make any step fail (see
/// `FaultInjectingFileSystem` in the `TaskSystemTesting` product). Each method retries on EINTR and throws
/// `SystemError.failed` naming the step's call, the path and errno.
public protocol FileSystem: Sendable {
  /// Creates a new file with `O_CREAT | O_EXCL | O_NOFOLLOW` and mode 0600,
  /// open for writing; never follows or replaces an existing name.
  func createExclusive(_ path: String) throws -> Int32
  /// Writes all bytes, retrying short writes.
  func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws
  /// Flushes a file to stable storage.
  func fsync(_ fd: Int32, path: String) throws
  /// Closes a descriptor; the descriptor is gone even when this throws.
  func close(_ fd: Int32, path: String) throws
  /// Atomically gives `from` the name `to`, replacing what was there.
  func move(_ from: String, to: String) throws
  /// Makes a hard link `to` for `from`.
  func link(_ from: String, to: String) throws
  /// Removes a name; a missing name is not an error.
  func unlink(_ path: String) throws
  /// Flushes a directory's entries to stable storage.
  func fsyncDirectory(_ path: String) throws
}

/// The real file system.
public struct PosixFileSystem: FileSystem {
  /// The real file system.
  public init() {}

  /// See `FileSystem.createExclusive`.
  public func createExclusive(_ path: String) throws -> Int32 {
    try retrying(FileStep.createExclusive.rawValue, path) {
      Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    }
  }

  /// See `FileSystem.write`.
  public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
    try FileDescriptor(fd, name: path).write(bytes)
  }

  /// See `FileSystem.fsync`.
  public func fsync(_ fd: Int32, path: String) throws {
    try retrying(FileStep.fsync.rawValue, path) { Glibc.fsync(fd) }
  }

  /// See `FileSystem.close`.
  public func close(_ fd: Int32, path: String) throws {
    // close is never retried: on Linux the descriptor is released even on EINTR.
    guard Glibc.close(fd) == 0 else {
      throw SystemError.failed(call: FileStep.close.rawValue, path: path, errno: errno)
    }
  }

  /// See `FileSystem.move`.
  public func move(_ from: String, to: String) throws {
    try retrying(FileStep.rename.rawValue, to) { Glibc.rename(from, to) }
  }

  /// See `FileSystem.link`.
  public func link(_ from: String, to: String) throws {
    try retrying(FileStep.link.rawValue, to) { Glibc.link(from, to) }
  }

  /// See `FileSystem.unlink`.
  public func unlink(_ path: String) throws {
    while Glibc.unlink(path) != 0 {
      if errno == EINTR { continue }
      if errno == ENOENT { return }
      throw SystemError.failed(call: FileStep.unlink.rawValue, path: path, errno: errno)
    }
  }

  /// See `FileSystem.fsyncDirectory`.
  public func fsyncDirectory(_ path: String) throws {
    let fd = try retrying("open", path) { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    defer { Glibc.close(fd) }
    try retrying(FileStep.fsyncDirectory.rawValue, path) { Glibc.fsync(fd) }
  }
}
