import Foundation

/// The file operations attachments need, in one place: stream a source
/// into a new private file in the attachments folder (temporary name,
/// fsync, rename), stream a stored file out, remove one. Foundation only;
/// no C import.
enum AttachmentFile {
  /// Bytes moved per read or write: memory use stays at this, whatever the file size.
  static let chunkByteCount = 1 << 20

  /// Makes the attachments folder (mode 0700) when missing.
  static func prepareDirectory(_ path: String) throws {
    do {
      try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw TaskerError.fileAccess(path: path, reason: "cannot create the attachments folder")
    }
  }

  /// Opens a file for reading.
  static func openForReading(_ path: String) throws -> FileHandle {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw TaskerError.fileAccess(path: path, reason: "cannot open it for reading")
    }
    return handle
  }

  /// Reads up to one chunk; empty at the end.
  static func readChunk(_ handle: FileHandle, path: String) throws -> [UInt8] {
    do {
      return [UInt8](try handle.read(upToCount: chunkByteCount) ?? Data())
    } catch {
      throw TaskerError.fileAccess(path: path, reason: "read failed")
    }
  }

  /// Writes `path` as a new 0600 file through `body`, which is handed a
  /// writer; the data goes to a temporary name first, is synced, and is
  /// renamed into place only when `body` returns. On any error the
  /// temporary file is removed and `path` does not exist.
  static func create(_ path: String, _ body: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws {
    let temporary = path + ".partial"
    guard
      FileManager.default.createFile(atPath: temporary, contents: nil, attributes: [.posixPermissions: 0o600]),
      let handle = FileHandle(forWritingAtPath: temporary)
    else { throw TaskerError.fileAccess(path: temporary, reason: "cannot create it") }
    do {
      try body { bytes in
        do {
          try handle.write(contentsOf: bytes)
        } catch {
          throw TaskerError.fileAccess(path: temporary, reason: "write failed (disk full?)")
        }
      }
      do {
        try handle.synchronize()
        try handle.close()
      } catch {
        throw TaskerError.fileAccess(path: temporary, reason: "fsync failed")
      }
      do {
        try FileManager.default.moveItem(atPath: temporary, toPath: path)
      } catch {
        throw TaskerError.fileAccess(path: path, reason: "cannot rename the new file into place")
      }
    } catch {
      try? handle.close()
      try? FileManager.default.removeItem(atPath: temporary)
      throw error
    }
  }

  /// Removes a file; a missing file is not an error.
  static func remove(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
  }
}
