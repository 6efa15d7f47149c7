import TaskSystem

/// The real file system, except that a step fails whenever `fault`
/// returns an errno for it: the test seam for crash and disk-full paths.
/// It lives in `TaskSystemTesting`, a product for tests only, so no
/// shipped library or binary carries it; it needs nothing of TaskSystem
/// but its public `FileSystem` seam.
/// `fault` receives the step and the path it acts on (the target for
/// `rename` and `link`, the directory for `fsyncDirectory`).
public final class FaultInjectingFileSystem: FileSystem, @unchecked Sendable {
  /// Returns an errno to make `step` on `path` fail, or nil to let it run.
  public var fault: ((FileStep, String) -> Int32?)?
  private let real = PosixFileSystem()

  /// A file system that fails where `fault` says.
  public init(fault: ((FileStep, String) -> Int32?)? = nil) {
    self.fault = fault
  }

  private func inject(_ step: FileStep, _ path: String) throws {
    if let code = fault?(step, path) { throw SystemError.failed(call: step.rawValue, path: path, errno: code) }
  }

  /// See `FileSystem.createExclusive`.
  public func createExclusive(_ path: String) throws -> Int32 {
    try inject(.createExclusive, path)
    return try real.createExclusive(path)
  }

  /// See `FileSystem.write`.
  public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
    try inject(.write, path)
    try real.write(fd, bytes, path: path)
  }

  /// See `FileSystem.fsync`.
  public func fsync(_ fd: Int32, path: String) throws {
    try inject(.fsync, path)
    try real.fsync(fd, path: path)
  }

  /// See `FileSystem.close`; the descriptor is closed even when the
  /// injected fault fires.
  public func close(_ fd: Int32, path: String) throws {
    do { try inject(.close, path) } catch {
      try? real.close(fd, path: path)
      throw error
    }
    try real.close(fd, path: path)
  }

  /// See `FileSystem.move`.
  public func move(_ from: String, to: String) throws {
    try inject(.rename, to)
    try real.move(from, to: to)
  }

  /// See `FileSystem.link`.
  public func link(_ from: String, to: String) throws {
    try inject(.link, to)
    try real.link(from, to: to)
  }

  /// See `FileSystem.unlink`.
  public func unlink(_ path: String) throws {
    try inject(.unlink, path)
    try real.unlink(path)
  }

  /// See `FileSystem.fsyncDirectory`.
  public func fsyncDirectory(_ path: String) throws {
    try inject(.fsyncDirectory, path)
    try real.fsyncDirectory(path)
  }
}
