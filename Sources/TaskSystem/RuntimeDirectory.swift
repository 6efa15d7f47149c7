import CTaskSystem
import Glibc

/// Where session keys live while a vault is unlocked: memory that a reboot
/// clears and that no other user can read, and the kernel's boot id that
/// tells one boot from the next.
public enum RuntimeDirectory {
  /// The directory for session keys, in memory that a reboot clears, in a
  /// place no other user can create, squat or read:
  ///
  /// 1. `$XDG_RUNTIME_DIR/taskkey`, when `XDG_RUNTIME_DIR` is an absolute
  ///    path to a tmpfs directory owned by the user with mode 0700 (the
  ///    login manager makes it; nobody else can);
  /// 2. else `/run/user/<uid>/taskkey` under the same checks;
  /// 3. else in `/dev/shm`, which every user can write: `taskkey-<uid>`
  ///    when it is the user's private directory, else the first (by name)
  ///    `taskkey-<uid>.<suffix>` that is, else a new one made with
  ///    `mkdtemp`. A squatter — another user's directory, a symlink, a file
  ///    under those names — is never used, only routed around
  ///    (`squatters()` names them).
  ///
  /// - Returns: the path, made 0700 when missing.
  /// - Throws: `SystemError.runtimeDirectoryUnavailable` saying why.
  public static func sharedMemory() throws -> String {
    for base in loginRuntimeDirectories() where isPrivateTmpfsDirectory(base) {
      let path = base + "/taskkey"
      if mkdir(path, 0o700) != 0 && errno != EEXIST {
        throw SystemError.runtimeDirectoryUnavailable(reason: "cannot create \(path) (errno \(errno))")
      }
      guard isPrivateDirectory(path) else {
        throw SystemError.runtimeDirectoryUnavailable(reason: "\(path) is not a private directory owned by you")
      }
      return path
    }
    guard isTmpfs("/dev/shm") else {
      throw SystemError.runtimeDirectoryUnavailable(reason: "/dev/shm is missing or not a tmpfs")
    }
    return try privateDirectory(in: "/dev/shm", name: "taskkey-\(getuid())")
  }

  /// `$XDG_RUNTIME_DIR` (when absolute) and `/run/user/<uid>`, in that order.
  static func loginRuntimeDirectories() -> [String] {
    var candidates = [String]()
    if let value = getenv("XDG_RUNTIME_DIR"), let text = String(validatingCString: value), text.hasPrefix("/") {
      candidates.append(text)
    }
    candidates.append("/run/user/\(getuid())")
    return candidates
  }

  /// The user's private directory `name`, or `name.<suffix>`, in the
  /// shared directory `base`; squatted names are passed over, and a new
  /// directory is made with `mkdtemp` when every existing one is squatted.
  ///
  /// - Throws: `SystemError.runtimeDirectoryUnavailable` when none can be
  ///   made.
  static func privateDirectory(in base: String, name: String) throws -> String {
    let plain = base + "/" + name
    if mkdir(plain, 0o700) == 0 || isPrivateDirectory(plain) {
      if isPrivateDirectory(plain) { return plain }
    }
    for entry in entries(of: base).sorted() where entry.hasPrefix(name + ".") {
      if isPrivateDirectory(base + "/" + entry) { return base + "/" + entry }
    }
    var template = Array((plain + ".XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
      throw SystemError.runtimeDirectoryUnavailable(reason: "cannot create a directory in \(base) (errno \(errno))")
    }
    let path = String(cString: made)
    // Another process may have made one a moment earlier: all agree on the first by name.
    return entries(of: base).sorted().first { $0.hasPrefix(name + ".") && isPrivateDirectory(base + "/" + $0) }
      .map { base + "/" + $0 } ?? path
  }

  /// Entries of the shared directories that squat a session-key name: in
  /// `/dev/shm`, `taskkey-<uid>` or `taskkey-<uid>.*` that is not the
  /// user's private directory; and a `XDG_RUNTIME_DIR` that is set but is
  /// not the user's private tmpfs directory. For `doctor`.
  public static func squatters() -> [String] {
    let name = "taskkey-\(getuid())"
    var found = entries(of: "/dev/shm").sorted().filter { $0 == name || $0.hasPrefix(name + ".") }
      .map { "/dev/shm/" + $0 }.filter { !isPrivateDirectory($0) }
    if let base = loginRuntimeDirectories().first, getenv("XDG_RUNTIME_DIR") != nil, !isPrivateTmpfsDirectory(base) {
      found.insert(base, at: 0)
    }
    return found
  }

  /// A directory (not a symlink) owned by the user with no group or other bits.
  static func isPrivateDirectory(_ path: String) -> Bool {
    var info = stat()
    guard lstat(path, &info) == 0 else { return false }
    return info.st_mode & S_IFMT == S_IFDIR && info.st_uid == getuid() && info.st_mode & 0o077 == 0
  }

  static func isPrivateTmpfsDirectory(_ path: String) -> Bool { isPrivateDirectory(path) && isTmpfs(path) }

  /// Whether `path` is on a tmpfs, as the kernel says for the file system
  /// that holds it: `statfs(2)` reports `TMPFS_MAGIC`. (One system call;
  /// reading and parsing `/proc/self/mounts`, as before, cost every
  /// `taskkey` process that opens the vault a few hundred µs.)
  static func isTmpfs(_ path: String) -> Bool {
    task_system_is_tmpfs(path) == 1
  }

  static func entries(of directory: String) -> [String] {
    ((try? DirectoryListing.names(of: directory)) ?? nil) ?? []
  }

  /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`) as its text,
  /// a UUID without the newline; it changes at every boot.
  ///
  /// - Throws: `SystemError.failed` when the file cannot be read.
  public static func bootIDText(path: String = "/proc/sys/kernel/random/boot_id") throws -> String {
    let bytes = try OpenFile.reading(path).readAll(limit: 64)
    return String(decoding: bytes, as: UTF8.self).trimmingNewline()
  }
}

extension String {
  fileprivate func trimmingNewline() -> String {
    hasSuffix("\n") ? String(dropLast()) : self
  }
}
