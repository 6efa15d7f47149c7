import TaskSystem

/// The files sync streams through: the files of a folder target, and the
/// staging folder beside the database that earlier versions and killed
/// runs left files in. Every new file is created exclusively (0600, never
/// through a symlink), written, fsynced and closed; a failure removes it.
enum SyncFiles {
  /// The staging folder earlier versions staged blobs in:
  /// `<folder of the database>/sync-blobs`.
  static func stagingPath(forDatabase databasePath: String) -> String {
    PosixFileSystem.directory(of: databasePath) + "/sync-blobs"
  }

  /// Removes what a killed upload or fetch left in the staging folder:
  /// every regular file whose name is a blob's staging name (32 hex and
  /// `.up` or `.down`). Only called with the home's sync lock held, when
  /// no other staging can be under way.
  static func clearStaging(forDatabase databasePath: String) {
    let folder = stagingPath(forDatabase: databasePath)
    for name in (try? DirectoryListing.names(of: folder)) ?? [] {
      let parts = name.split(separator: ".", omittingEmptySubsequences: false)
      guard parts.count == 2, SyncHex.isID(String(parts[0])), parts[1] == "up" || parts[1] == "down",
        (try? FileStatus.of(folder + "/" + name))??.kind == .regular
      else { continue }
      remove(folder + "/" + name)
    }
  }

  /// Writes a new file at `path` through `body`.
  ///
  /// - Throws: `SyncError.storage` (also when `path` exists), or what
  ///   `body` throws; nothing is left at `path` then.
  static func createNew(_ path: String, _ body: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void)
    throws
  {
    let files = PosixFileSystem()
    let fd: Int32
    do {
      fd = try files.createExclusive(path)
    } catch let error as SystemError {
      throw SyncError.storage(error)
    }
    var open = true
    do {
      try body { bytes in try storing { try files.write(fd, bytes, path: path) } }
      try storing { try files.fsync(fd, path: path) }
      open = false
      try storing { try files.close(fd, path: path) }
    } catch {
      if open { try? files.close(fd, path: path) }
      try? files.unlink(path)
      throw error
    }
  }

  /// Streams the file at `source` into `write` in pieces of 1 MiB, at
  /// most `limit` bytes (a longer source is cut at `limit + 1`, so a
  /// reader refuses it).
  ///
  /// - Throws: `SyncError.storage`; the errors of `write`.
  static func stream(_ source: String, limit: UInt64, into write: (UnsafeRawBufferPointer) throws -> Void) throws {
    let input = try storing { try OpenFile.reading(source) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var copied: UInt64 = 0
    while copied <= limit {
      let count = try storing { try buffer.withUnsafeMutableBytes { try input.read(into: $0) } }
      if count == 0 { break }
      let kept = Int(min(UInt64(count), limit + 1 - copied))
      try buffer.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[..<kept])) }
      copied += UInt64(kept)
    }
  }

  /// Pulls bytes from `read` into `write` in pieces of up to 1 MiB until
  /// `read` gives 0.
  ///
  /// - Throws: the errors of `read` and `write`.
  static func pull(
    _ read: (UnsafeMutableRawBufferPointer) throws -> Int, into write: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while case let count = try buffer.withUnsafeMutableBytes({ try read($0) }), count > 0 {
      try buffer.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }
  }

  /// Removes a file; a missing one is fine.
  static func remove(_ path: String) {
    try? PosixFileSystem().unlink(path)
  }

  private static func storing<Result>(_ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch let error as SystemError {
      throw SyncError.storage(error)
    }
  }
}
