import FoundationEssentials
import TaskCrypto
import TaskSystem

/// The files Tasker keeps beside its database — the database file itself,
/// the attachments folder and attachment files — written through TaskKey's
/// file-system seam (`TaskSystem.FileSystem`), so a test can make any step
/// fail. No C import here.
///
/// A new file is created `O_CREAT | O_EXCL | O_NOFOLLOW` with mode 0600
/// under a temporary name, written, fsynced, closed, renamed into place,
/// and its directory fsynced; on any failure the temporary file is removed
/// and the name never appears. Folders are made 0700 and checked private.
struct TaskerFiles {
  /// Where every write goes.
  let fileSystem: FileSystem

  /// Bytes moved per read or write: memory use stays at this, whatever the file size.
  static let chunkByteCount = 1 << 20

  /// Makes a private folder (mode 0700) when missing and checks it.
  ///
  /// - Throws: `TaskerError.system` (for example a folder readable by others).
  func prepareDirectory(_ path: String) throws {
    try Self.system { try PrivateDirectory.make(path) }
  }

  /// Creates an empty 0600 file when none exists (the database, before
  /// SQLite opens it; SQLite gives its -wal and -shm files the same mode).
  ///
  /// - Throws: `TaskerError.system`.
  func createEmptyIfMissing(_ path: String) throws {
    guard !FileStatus.exists(path) else { return }
    do {
      try fileSystem.createNew(path, contents: [])
    } catch let error as SystemError where error.isAlreadyExisting {
      return
    } catch let error as SystemError {
      throw TaskerError.system(error)
    }
  }

  /// Writes `path` as a new 0600 file through `body`, which is handed a
  /// writer; the name appears only when `body` returned and the data is on
  /// disk. On any error no file is left under either name.
  ///
  /// - Parameters:
  ///   - path: the file to make.
  ///   - replacing: true for a name the code owns (an attachment file,
  ///     written as `<path>.partial` and renamed over `path`); false for a
  ///     name the user chose (written as `.<name>.tasker-<16 hex>` beside it
  ///     and given the name by a hard link, which never replaces a file
  ///     that appeared meanwhile).
  ///   - body: writes the content.
  /// - Throws: `TaskerError.system` (`isAlreadyExisting` when `path`
  ///   appeared and `replacing` is false), or what `body` throws.
  func create(
    _ path: String, replacing: Bool = true, _ body: (_ write: ([UInt8]) throws -> Void) throws -> Void
  ) throws {
    let temporary = replacing ? path + ".partial" : Self.temporaryName(beside: path)
    let fd = try Self.system { try fileSystem.createExclusive(temporary) }
    var open = true
    do {
      try body { bytes in
        try Self.system { try bytes.withUnsafeBytes { try fileSystem.write(fd, $0, path: temporary) } }
      }
      try Self.system { try fileSystem.fsync(fd, path: temporary) }
      open = false
      try Self.system { try fileSystem.close(fd, path: temporary) }
      if replacing {
        try Self.system { try fileSystem.move(temporary, to: path) }
      } else {
        try Self.system { try fileSystem.link(temporary, to: path) }
        // The content is complete under `path`; the second name goes.
        try? fileSystem.unlink(temporary)
      }
    } catch {
      if open { try? fileSystem.close(fd, path: temporary) }
      try? fileSystem.unlink(temporary)
      throw error
    }
    do {
      try Self.system { try fileSystem.fsyncDirectory(Self.directory(of: path)) }
    } catch {
      // The new name might not survive a crash: take it back, so the caller records nothing.
      try? fileSystem.unlink(path)
      throw error
    }
  }

  /// A new temporary name beside `path`: `.<name>.tasker-<16 hex>`, random
  /// so that no other user can prepare it.
  static func temporaryName(beside path: String) -> String {
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { String(path[...$0]) } ?? ""
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    return "\(directory).\(name).tasker-\(SecureRandom.bytes(count: 8).lowercaseHex)"
  }

  /// Removes a file; a missing file is not an error.
  func remove(_ path: String) {
    try? fileSystem.unlink(path)
  }

  /// Opens a file for reading in chunks.
  ///
  /// - Throws: `TaskerError.system` (`isNotFound` when it is missing).
  func reader(_ path: String) throws -> ChunkReader {
    ChunkReader(file: try Self.system { try OpenFile.reading(path) })
  }

  /// The first `count` bytes of a file (fewer when it is shorter), read
  /// without reading the rest.
  ///
  /// - Throws: `TaskerError.system` (`isNotFound` when it is missing).
  func prefix(of path: String, count: Int) throws -> [UInt8] {
    let file = try Self.system { try OpenFile.reading(path) }
    var bytes = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
      let read = try Self.system {
        try bytes.withUnsafeMutableBytes { try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
      }
      if read == 0 { break }
      filled += read
    }
    return Array(bytes[..<filled])
  }

  /// The folder that holds `path`, as `dirname` gives it: trailing slashes
  /// ignored, "/" for a file at the root, "." for a bare name.
  static func directory(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    var parent = trimmed[..<slash]
    while parent.hasSuffix("/") { parent.removeLast() }
    return parent.isEmpty ? "/" : String(parent)
  }

  /// Runs a TaskSystem call, turning its error into `TaskerError.system`.
  static func system<Result>(_ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch let error as SystemError {
      throw TaskerError.system(error)
    }
  }
}

/// Reads an open file one chunk at a time into one reused buffer.
final class ChunkReader {
  private let file: OpenFile
  private var buffer = [UInt8](repeating: 0, count: TaskerFiles.chunkByteCount)

  init(file: OpenFile) {
    self.file = file
  }

  /// The next chunk; empty at the end.
  ///
  /// - Throws: `TaskerError.system`.
  func next() throws -> [UInt8] {
    let count = try TaskerFiles.system { try buffer.withUnsafeMutableBytes { try file.read(into: $0) } }
    return Array(buffer[..<count])
  }
}
