import TaskSystem

/// The files sync streams through: blobs staged beside the database
/// before an upload or after a download, and copies into a folder
/// target. Every new file is created exclusively (0600, never through a
/// symlink), written, fsynced and closed; a failure removes it.
enum SyncFiles {
  /// The private folder beside the database that stages blobs:
  /// `<folder of the database>/sync-blobs`.
  static func stagingFolder(forDatabase databasePath: String) throws -> String {
    let folder = stagingPath(forDatabase: databasePath)
    do {
      try PrivateDirectory.make(folder)
    } catch let error as SystemError {
      throw SyncError.storage(error)
    }
    return folder
  }

  /// The staging folder's path, made or not.
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

  /// Copies the file at `source` to a new file at `path`, as `stream` reads it.
  ///
  /// - Throws: `SyncError.storage`.
  static func copy(_ source: String, to path: String, limit: UInt64) throws {
    try createNew(path) { write in try stream(source, limit: limit, into: write) }
  }

  /// A reader of the file at `path` in buffers, for a streamed upload.
  ///
  /// - Returns: the file's length and a function that fills a buffer (0 at the end).
  /// - Throws: `SyncError.storage`.
  static func reader(_ path: String) throws -> (byteCount: Int, read: (UnsafeMutableRawBufferPointer) throws -> Int) {
    let input = try storing { try OpenFile.reading(path) }
    return (input.size, { buffer in try input.read(into: buffer) })
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
