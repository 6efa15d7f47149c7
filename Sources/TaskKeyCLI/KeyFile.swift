import Glibc
import TaskCrypto

/// Reads and writes key files: one line `<8 hex kid>:<64 hex key>`, mode
/// 0600, owned by the user. The key bytes go straight into locked memory.
enum KeyFile {
  /// Reads a key file, refusing it when it is not a regular file owned by
  /// the caller with no group or other permission bits.
  static func read(path: String) throws -> NoteKey {
    let fd = try openOwnerOnlyFile(path)
    defer { close(fd) }

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

/// Opens a file that holds a secret (a key file, a passphrase file) for
/// reading, refusing it unless it is a regular file, not a symbolic link,
/// owned by the caller, with no group or other permission bits. The checks
/// run on the opened descriptor, so the file cannot be swapped in between.
///
/// - Returns: the open descriptor; the caller closes it.
func openOwnerOnlyFile(_ path: String) throws -> Int32 {
  let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
  guard fd >= 0 else {
    let code = errno
    if code == ELOOP { throw CLIError.notRegularFile(path: path) }
    throw CLIError.cannotOpen(path: path, reason: errnoDescription(code))
  }
  var info = stat()
  let refusal: CLIError?
  if fstat(fd, &info) != 0 {
    refusal = .io(path: path, call: "fstat", errno: errno)
  } else if info.st_mode & S_IFMT != S_IFREG {
    refusal = .notRegularFile(path: path)
  } else if info.st_uid != getuid() {
    refusal = .notOwner(path: path)
  } else if info.st_mode & 0o077 != 0 {
    refusal = .unsafePermissions(path: path, mode: info.st_mode & 0o7777)
  } else {
    refusal = nil
  }
  if let refusal {
    close(fd)
    throw refusal
  }
  return fd
}
