import Glibc
import TaskCrypto

/// Reads and writes key files: one line `<8 hex kid>:<64 hex key>`, mode
/// 0600, owned by the user. The key bytes go straight into locked memory.
enum KeyFile {
  /// Reads a key file, refusing it when it is not a regular file owned by
  /// the caller with no group or other permission bits.
  static func read(path: String) throws -> NoteKey {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else {
      let code = errno
      if code == ELOOP { throw CLIError.notRegularFile(path: path) }
      throw CLIError.cannotOpen(path: path, reason: errnoDescription(code))
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw CLIError.io(path: path, call: "fstat", errno: errno) }
    guard info.st_mode & S_IFMT == S_IFREG else { throw CLIError.notRegularFile(path: path) }
    guard info.st_uid == getuid() else { throw CLIError.notOwner(path: path) }
    guard info.st_mode & 0o077 == 0 else { throw CLIError.unsafePermissions(path: path, mode: info.st_mode & 0o7777) }

    // A valid file is 73 or 74 bytes; read one more to notice anything longer.
    let buffer = try SecureBytes(zeroedCount: NoteKey.keyFileLineByteCount + 2)
    let length = try buffer.withUnsafeMutableBytes { out -> Int in
      var total = 0
      while total < out.count {
        let count = Glibc.read(fd, out.baseAddress! + total, out.count - total)
        if count < 0 {
          if errno == EINTR { continue }
          throw CLIError.io(path: path, call: "read", errno: errno)
        }
        if count == 0 { break }
        total += count
      }
      return total
    }
    do {
      return try buffer.withUnsafeBytes { try NoteKey.parseKeyFile(UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
    } catch let error as TaskCryptoError {
      throw CLIError.crypto(error)
    }
  }

  /// Creates a new key file with `O_CREAT | O_EXCL | O_NOFOLLOW` and mode
  /// 0600, writes the key, and syncs the file and its directory. Refuses to
  /// replace an existing file.
  static func create(path: String, key: NoteKey) throws {
    let line: SecureBytes
    do { line = try key.keyFileBytes() } catch let error as TaskCryptoError { throw CLIError.crypto(error) }
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      let code = errno
      if code == EEXIST { throw CLIError.fileExists(path: path) }
      throw CLIError.cannotOpen(path: path, reason: errnoDescription(code))
    }
    var closed = false
    defer { if !closed { close(fd) } }
    do {
      try line.withUnsafeBytes { try writeAll(fd: fd, $0, path: path) }
      guard fsync(fd) == 0 else { throw CLIError.io(path: path, call: "fsync", errno: errno) }
      closed = true
      guard close(fd) == 0 else { throw CLIError.io(path: path, call: "close", errno: errno) }
    } catch {
      // Leave nothing half-written behind.
      unlink(path)
      throw error
    }
    try syncDirectory(containing: path)
  }

  static func syncDirectory(containing path: String) throws {
    let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
    let fd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { throw CLIError.io(path: directory, call: "open", errno: errno) }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw CLIError.io(path: directory, call: "fsync", errno: errno) }
  }
}
