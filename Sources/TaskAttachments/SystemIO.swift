import TaskCrypto
import TaskSystem

/// The file operations of TaskAttachments, all through TaskSystem: reads
/// through its descriptors, and every write, flush, link, rename and
/// removal through its file-system seam, which tests replace with a
/// `FaultInjectingFileSystem` to make any step fail.
enum SystemIO {
  /// The seam; tests swap in a `FaultInjectingFileSystem`.
  nonisolated(unsafe) static var fileSystem: any FileSystem = PosixFileSystem()

  /// Runs TaskSystem calls, wrapping their errors.
  static func call<T>(_ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as SystemError {
      throw AttachmentError.system(error)
    }
  }

  /// Reads up to `buffer.count` bytes; 0 only at the end.
  static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, name: String) throws -> Int {
    try call { try FileDescriptor(fd, name: name).readSome(into: buffer) }
  }

  /// Reads exactly `buffer.count` bytes at `offset`, or fails.
  static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64, name: String) throws {
    try call { try FileDescriptor(fd, name: name).read(into: buffer, atOffset: offset) }
  }

  /// Writes all of `bytes` to a descriptor this module does not own.
  static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, name: String) throws {
    try call { try FileDescriptor(fd, name: name).write(bytes) }
  }

  /// Opens an existing file for reading (closed when the value goes away).
  static func openForReading(_ path: String) throws -> OpenFile {
    try call { try OpenFile.reading(path) }
  }

  /// The size of `path` when it is a regular file (not following a final
  /// symlink), else nil.
  static func regularFileSize(_ file: OpenFile) throws -> UInt64? {
    guard let status = try call({ try FileStatus.of(file.path) }), status.identity == file.identity else { return nil }
    return status.kind == .regular ? UInt64(file.size) : nil
  }

  /// Whether anything (even a dangling symlink) has this name.
  static func exists(_ path: String) -> Bool { FileStatus.exists(path) }

  /// Creates a new, empty, owner-only temporary file beside `path`
  /// (`.<name>.taskkey-<16 hex>`), never following or replacing a name.
  static func createTemporary(beside path: String) throws -> (fd: Int32, path: String) {
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { String(path[...$0]) } ?? ""
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    let temporary = "\(directory).\(name).taskkey-\(SecureRandom.bytes(count: 8).lowercaseHex)"
    return (try call { try fileSystem.createExclusive(temporary) }, temporary)
  }

  /// Writes all of `bytes` to a file this module created.
  static func writeCreated(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
    try call { try fileSystem.write(fd, bytes, path: path) }
  }

  /// Flushes and closes a file this module created; the descriptor is gone
  /// even when closing fails.
  static func finish(_ fd: Int32, path: String) throws {
    do {
      try call { try fileSystem.fsync(fd, path: path) }
    } catch {
      try? fileSystem.close(fd, path: path)
      throw error
    }
    try call { try fileSystem.close(fd, path: path) }
  }

  /// Closes a file this module created, ignoring errors (on a failure path).
  static func abandon(_ fd: Int32, path: String) { try? fileSystem.close(fd, path: path) }

  /// Gives `from` the name `to` without replacing anything there (a hard
  /// link, then the old name removed).
  static func linkNew(_ from: String, to: String) throws {
    do {
      try fileSystem.link(from, to: to)
    } catch let error as SystemError where error.isAlreadyExisting {
      throw AttachmentError.destinationExists(path: to)
    } catch let error as SystemError {
      throw AttachmentError.system(error)
    }
    try unlink(from)
  }

  /// Atomically gives `from` the name `to`, replacing what was there.
  static func move(_ from: String, to: String) throws {
    try call { try fileSystem.move(from, to: to) }
  }

  /// Removes a name; a missing name is not an error.
  static func unlink(_ path: String) throws {
    try call { try fileSystem.unlink(path) }
  }

  /// Flushes the directory holding `path`, so a new name survives a crash.
  static func fsyncDirectory(of path: String) throws {
    let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "."
    try call { try fileSystem.fsyncDirectory(directory) }
  }
}
