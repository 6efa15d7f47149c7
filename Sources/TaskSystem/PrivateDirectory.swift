import Glibc

/// Directories that must be private to the user (mode 0700, owned by the
/// user, reached through no other user's symlink).
public enum PrivateDirectory {
  /// Checks a directory: no symlink owned by another user on the way (or,
  /// with `allowingSymlink` false, no symlink at the path itself), owned by
  /// the user, no group or other permission bits.
  ///
  /// - Returns: false when it does not exist.
  /// - Throws: `SystemError.untrustedSymlink`, `.wrongFileType`,
  ///   `.notOwner`, `.loosePermissions` (fix: `chmod 700`), `.failed`.
  @discardableResult
  public static func check(_ path: String, allowingSymlink: Bool = true) throws -> Bool {
    try checkSymlinks(on: path)
    let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (allowingSymlink ? 0 : O_NOFOLLOW)
    let fd = Glibc.open(path, flags)
    guard fd >= 0 else {
      let code = errno
      if code == ENOENT { return false }
      if code == ENOTDIR || code == ELOOP {
        throw SystemError.wrongFileType(
          path: path, expected: allowingSymlink ? "a directory" : "a directory (or is a symlink)")
      }
      throw SystemError.failed(call: "open", path: path, errno: code)
    }
    defer { Glibc.close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw SystemError.failed(call: "fstat", path: path, errno: errno) }
    guard info.st_uid == getuid() else { throw SystemError.notOwner(path: path) }
    guard info.st_mode & 0o077 == 0 else {
      throw SystemError.loosePermissions(path: path, mode: UInt32(info.st_mode & 0o7777), fix: "chmod 700 '\(path)'")
    }
    return true
  }

  /// Refuses a path any of whose components is a symlink owned by neither
  /// the user nor root.
  ///
  /// - Throws: `SystemError.untrustedSymlink` naming the component.
  public static func checkSymlinks(on path: String) throws {
    var prefix = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/", omittingEmptySubsequences: true) {
      prefix += "/" + component
      var info = stat()
      guard lstat(prefix, &info) == 0 else { return }  // the rest does not exist yet
      if info.st_mode & S_IFMT == S_IFLNK && info.st_uid != 0 && info.st_uid != getuid() {
        throw SystemError.untrustedSymlink(path: prefix)
      }
    }
  }

  /// Refuses a path inside a directory that another user can change, as
  /// ssh's StrictModes does: every existing ancestor must be owned by the
  /// user or root, and must not be writable by group or others unless it
  /// has the sticky bit (as `/tmp` has, so others cannot move our entries).
  ///
  /// - Throws: `SystemError.notOwner` or `.loosePermissions` naming the
  ///   ancestor.
  public static func checkAncestors(of path: String) throws {
    var absolute = path
    if !path.hasPrefix("/") {
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      guard getcwd(&buffer, buffer.count) != nil else {
        throw SystemError.failed(call: "getcwd", path: path, errno: errno)
      }
      absolute = String(cString: buffer) + "/" + path
    }
    var ancestors = ["/"]
    var prefix = ""
    for component in absolute.split(separator: "/", omittingEmptySubsequences: true).dropLast() {
      prefix += "/" + component
      ancestors.append(prefix)
    }
    for ancestor in ancestors {
      var info = stat()
      guard stat(ancestor, &info) == 0 else { return }  // the rest is made 0700 by us
      guard info.st_uid == 0 || info.st_uid == getuid() else { throw SystemError.notOwner(path: ancestor) }
      if info.st_mode & 0o022 != 0 && info.st_mode & S_ISVTX == 0 {
        throw SystemError.loosePermissions(
          path: ancestor, mode: UInt32(info.st_mode & 0o7777),
          fix: "chmod go-w '\(ancestor)', or put TASKKEY_HOME in a directory only you can change")
      }
    }
  }

  /// Makes `path` (and, with `parents`, every missing parent) with mode
  /// 0700, then checks it as `check(_:allowingSymlink:)` does.
  ///
  /// - Throws: `SystemError.failed` with the call `mkdir`, and the errors
  ///   of `check`.
  public static func make(_ path: String, parents: Bool = true, allowingSymlink: Bool = true) throws {
    try checkSymlinks(on: path)
    var prefixes = [path]
    if parents {
      prefixes = []
      var prefix = path.hasPrefix("/") ? "" : "."
      for component in path.split(separator: "/", omittingEmptySubsequences: true) {
        prefix += "/" + component
        prefixes.append(prefix)
      }
    }
    for prefix in prefixes where mkdir(prefix, 0o700) != 0 && errno != EEXIST {
      throw SystemError.failed(call: "mkdir", path: prefix, errno: errno)
    }
    guard try check(path, allowingSymlink: allowingSymlink) else {
      throw SystemError.failed(call: "open", path: path, errno: ENOENT)
    }
  }
}
