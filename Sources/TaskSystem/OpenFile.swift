import Glibc

/// Which file a path named at one moment: device and inode.
public struct FileIdentity: Equatable, Hashable, Sendable {
  /// The device number.
  public let device: UInt64
  /// The inode number.
  public let inode: UInt64

  init(_ info: stat) {
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
  }
}

/// A file open for reading, closed when the value goes away. While it is
/// open its inode cannot be reused, so `identity` stays meaningful.
public final class OpenFile: @unchecked Sendable {
  /// The path it was opened by.
  public let path: String
  /// Its size when it was opened.
  public let size: Int
  /// Its device and inode.
  public let identity: FileIdentity
  /// The open descriptor, for reads the caller drives (one byte at a time,
  /// say); the file closes it when released, so never close it yourself.
  public let descriptor: FileDescriptor

  private init(fd: Int32, path: String, info: stat) {
    self.path = path
    self.descriptor = FileDescriptor(fd, name: path)
    self.size = Int(info.st_size)
    self.identity = FileIdentity(info)
  }

  deinit { Glibc.close(descriptor.rawValue) }

  /// Opens an existing file that holds secrets (a vault file, a key or
  /// passphrase file, a session key), refusing it unless it is a regular
  /// file, not a symbolic link, owned by the user, with no group or other
  /// permission bits. The checks run on the opened descriptor, so the file
  /// cannot be swapped in between.
  ///
  /// - Returns: the open file, or nil when nothing exists at `path`.
  /// - Throws: `SystemError.wrongFileType` (a symlink, directory or
  ///   device), `.notOwner`, `.loosePermissions` (fix: `chmod 600`),
  ///   `.failed`.
  public static func ownerOnly(_ path: String) throws -> OpenFile? {
    try ownerOnly(path, flags: O_RDONLY)
  }

  static func ownerOnly(_ path: String, flags: Int32) throws -> OpenFile? {
    let fd = Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else {
      let code = errno
      if code == EINTR { return try ownerOnly(path, flags: flags) }
      if code == ENOENT { return nil }
      if code == ELOOP { throw SystemError.wrongFileType(path: path, expected: "a regular file (it is a symlink)") }
      throw SystemError.failed(call: "open", path: path, errno: code)
    }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
      let code = errno
      Glibc.close(fd)
      throw SystemError.failed(call: "fstat", path: path, errno: code)
    }
    let file = OpenFile(fd: fd, path: path, info: info)
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw SystemError.wrongFileType(path: path, expected: "a regular file")
    }
    guard info.st_uid == getuid() else { throw SystemError.notOwner(path: path) }
    guard info.st_mode & 0o077 == 0 else {
      throw SystemError.loosePermissions(path: path, mode: UInt32(info.st_mode & 0o7777), fix: "chmod 600 '\(path)'")
    }
    return file
  }

  /// Opens any readable file (an input that holds no secret of this
  /// user's, such as a backup or sync bundle to import).
  ///
  /// - Throws: `SystemError.failed` (`isNotFound` when it does not exist).
  public static func reading(_ path: String) throws -> OpenFile {
    let fd = try retrying("open", path) { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
      let code = errno
      Glibc.close(fd)
      throw SystemError.failed(call: "fstat", path: path, errno: code)
    }
    return OpenFile(fd: fd, path: path, info: info)
  }

  /// Reads until `buffer` is full or the end of the file, straight into
  /// the caller's (for secrets: locked) memory.
  ///
  /// - Returns: the byte count read.
  /// - Throws: `SystemError.failed` with the call `read`.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    try descriptor.read(into: buffer)
  }

  /// Reads the rest of the file, refusing it when it holds more than
  /// `limit` bytes (checked before reading and while reading).
  ///
  /// - Throws: `SystemError.tooLarge`, `.failed`.
  public func readAll(limit: Int) throws -> [UInt8] {
    guard size <= limit else { throw SystemError.tooLarge(path: path, byteCount: size, limit: limit) }
    return try descriptor.readToEnd(limit: limit, expected: size)
  }

  /// Opens an owner-only file (see `ownerOnly(_:)`) and reads it whole.
  ///
  /// - Returns: the bytes, or nil when nothing exists at `path`.
  /// - Throws: the errors of `ownerOnly(_:)` and `readAll(limit:)`.
  public static func readOwnerOnly(_ path: String, limit: Int) throws -> [UInt8]? {
    try ownerOnly(path)?.readAll(limit: limit)
  }
}
