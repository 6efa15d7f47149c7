import Glibc

/// What `lstat` says about a path, without following a final symlink.
public struct FileStatus: Sendable, Equatable {
  /// The kind of file.
  public enum Kind: Sendable, Equatable {
    /// A regular file.
    case regular
    /// A directory.
    case directory
    /// A symbolic link.
    case symlink
    /// A device, socket or pipe.
    case other
  }

  /// The kind of file.
  public let kind: Kind
  /// The permission bits (`mode & 0o7777`).
  public let mode: UInt32
  /// Whether the file belongs to the user running this process.
  public let isOwnedByUser: Bool
  /// Its device and inode.
  public let identity: FileIdentity

  /// The status of `path`, or nil when nothing exists there.
  ///
  /// - Throws: `SystemError.failed` with the call `lstat` for any other failure.
  public static func of(_ path: String) throws -> FileStatus? {
    var info = stat()
    guard lstat(path, &info) == 0 else {
      if errno == ENOENT || errno == ENOTDIR { return nil }
      throw SystemError.failed(call: "lstat", path: path, errno: errno)
    }
    let kind: Kind
    switch info.st_mode & S_IFMT {
    case S_IFREG: kind = .regular
    case S_IFDIR: kind = .directory
    case S_IFLNK: kind = .symlink
    default: kind = .other
    }
    return FileStatus(
      kind: kind, mode: UInt32(info.st_mode & 0o7777), isOwnedByUser: info.st_uid == getuid(),
      identity: FileIdentity(info))
  }

  /// Whether anything (a dangling symlink included) exists at `path`.
  public static func exists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
  }

  /// The absolute path of the existing file or directory at `path`, with
  /// every symlink, `.` and `..` resolved (`realpath`): one spelling for
  /// one file, so that something keyed by a file's location finds it
  /// whichever way the path was written.
  ///
  /// - Throws: `SystemError.failed` with the call `realpath` (for example
  ///   `ENOENT` when nothing is there).
  public static func canonicalPath(_ path: String) throws -> String {
    guard let resolved = realpath(path, nil) else {
      throw SystemError.failed(call: "realpath", path: path, errno: errno)
    }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// Sets the permission bits of the file or directory at `path` without
  /// following a symlink (open with `O_NOFOLLOW`, then `fchmod`).
  ///
  /// - Throws: `SystemError.failed` naming `open` or `fchmod`.
  public static func setMode(_ mode: UInt32, of path: String, isDirectory: Bool) throws {
    let fd = try retrying("open", path) {
      Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (isDirectory ? O_DIRECTORY : 0))
    }
    defer { Glibc.close(fd) }
    try retrying("fchmod", path) { fchmod(fd, mode_t(mode)) }
  }
}
