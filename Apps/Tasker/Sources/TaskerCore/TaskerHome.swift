import FoundationEssentials
import TaskSystem

/// Where Tasker keeps its files: one private directory holding the
/// database `tasker.db` and the `attachments/` folder beside it.
public struct TaskerHome: Sendable, Equatable {
  /// The directory.
  public let directory: String

  /// A home at `directory`.
  public init(directory: String) {
    self.directory = directory
  }

  /// The default home: `TASKER_HOME`, else `$XDG_DATA_HOME/tasker` (when
  /// absolute), else `~/.local/share/tasker` — the same parent TaskKey's
  /// vault uses by default (`…/tasker/keys`).
  ///
  /// - Returns: nil when not even `HOME` is set.
  public init?(environment: [String: String]) {
    if let home = environment["TASKER_HOME"], !home.isEmpty {
      directory = home
    } else if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
      directory = data + "/tasker"
    } else if let home = environment["HOME"], !home.isEmpty {
      directory = home + "/.local/share/tasker"
    } else {
      return nil
    }
  }

  /// The SQLite database.
  public var databasePath: String { directory + "/tasker.db" }

  /// The folder of attachment files.
  public var attachmentsDirectory: String { directory + "/attachments" }

  /// Makes the directory (mode 0700) when missing, and checks that it is
  /// private to the user.
  ///
  /// - Throws: `TaskerError.system`.
  func prepare(_ files: TaskerFiles) throws {
    try files.prepareDirectory(directory)
  }
}

extension TaskerHome {
  /// Refuses a store whose files another user could read or change, with
  /// the toolkit's owner-only rules (those TaskKey applies to its vault),
  /// before SQLite opens anything — for every command, reading or writing:
  ///
  /// - the directory holding the database: owned by the user, no group or
  ///   other permission bits, reached through no other user's symlink
  ///   (`PrivateDirectory.check`);
  /// - the database and its `-wal`, `-shm` and `-journal` files, where they
  ///   exist: regular files (not symlinks) owned by the user, no group or
  ///   other bits;
  /// - the `attachments` folder, where it exists: as the directory, and
  ///   not a symlink.
  ///
  /// Once the directory is the user's own and closed to others, nobody but
  /// the user (and root) can swap the files checked in it afterwards. A
  /// missing directory passes: opening the database then reports it.
  ///
  /// - Throws: `TaskerError.system` with `SystemError.loosePermissions`
  ///   (the fix: `chmod 700` or `chmod 600` and the path), `.notOwner`,
  ///   `.untrustedSymlink` or `.wrongFileType`, naming the path: exit 77.
  static func checkPrivate(databasePath: String) throws {
    let directory = TaskerFiles.directory(of: databasePath)
    try TaskerFiles.system {
      guard try PrivateDirectory.check(directory) else { return }
      for suffix in ["", "-wal", "-shm", "-journal"] { try checkPrivateFile(databasePath + suffix) }
      try PrivateDirectory.check(directory + "/attachments", allowingSymlink: false)
    }
  }

  /// A file that, when it exists, is a regular file of the user's with no
  /// group or other permission bits.
  ///
  /// - Throws: `SystemError.wrongFileType`, `.notOwner`, `.loosePermissions`.
  static func checkPrivateFile(_ path: String) throws {
    guard let status = try FileStatus.of(path) else { return }
    guard status.kind == .regular else {
      throw SystemError.wrongFileType(path: path, expected: "a regular file (not a symlink)")
    }
    guard status.isOwnedByUser else { throw SystemError.notOwner(path: path) }
    guard status.mode & 0o077 == 0 else {
      throw SystemError.loosePermissions(path: path, mode: status.mode, fix: "chmod 600 '\(path)'")
    }
  }
}
