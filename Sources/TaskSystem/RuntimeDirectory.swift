import Glibc

/// Where session keys live while a vault is unlocked: memory that a reboot
/// clears and that no other user can read, and the kernel's boot id that
/// tells one boot from the next.
public enum RuntimeDirectory {
  /// `/dev/shm/taskkey-<uid>`, made 0700 when missing, refused unless
  /// `/dev/shm` is a tmpfs and the directory is the user's own, private and
  /// not a symlink. It lasts until reboot (or until removed).
  ///
  /// - Returns: the path.
  /// - Throws: `SystemError.runtimeDirectoryUnavailable` saying why.
  public static func sharedMemory() throws -> String {
    let mounts = (try? OpenFile.reading("/proc/self/mounts").readAll(limit: 1 << 22)) ?? []
    let isTmpfs = String(decoding: mounts, as: UTF8.self).split(separator: "\n").contains { line in
      let fields = line.split(separator: " ")
      return fields.count > 2 && fields[1] == "/dev/shm" && fields[2] == "tmpfs"
    }
    guard isTmpfs else {
      throw SystemError.runtimeDirectoryUnavailable(reason: "/dev/shm is missing or not a tmpfs")
    }
    let path = "/dev/shm/taskkey-\(getuid())"
    if mkdir(path, 0o700) != 0 && errno != EEXIST {
      throw SystemError.runtimeDirectoryUnavailable(reason: "cannot create \(path) (errno \(errno))")
    }
    guard let status = try? FileStatus.of(path), status.kind == .directory, status.isOwnedByUser,
      status.mode & 0o077 == 0
    else {
      throw SystemError.runtimeDirectoryUnavailable(reason: "\(path) is not a private directory owned by you")
    }
    return path
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
