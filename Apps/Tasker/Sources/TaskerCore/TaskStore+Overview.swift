import TaskSystem

/// Cheap questions the read-only commands ask before they print: is there
/// a database yet, and is anything waiting for the user.
extension TaskStore {
  /// Opens the database in `home` for reading, as `reading(home:keys:)`,
  /// or returns nil when there is no database yet (a new home: `list`
  /// then shows an empty list instead of failing).
  ///
  /// Only a missing file means "none yet": the directory and every file
  /// in it are checked first, as for any open (`TaskerHome.checkPrivate`),
  /// so a loose directory, a database that is a symlink (dangling or not),
  /// or another user's file is still refused. Nothing is created.
  ///
  /// - Returns: the store, or nil when neither `tasker.db` nor the home
  ///   directory exists.
  /// - Throws: `TaskerError.system` when a file or folder is not private,
  ///   `.notADatabase`, `.databaseTooNew`, `.damagedDatabase`, `.database`.
  public static func readingIfPresent(home: TaskerHome, keys: NoteKeySource) throws -> TaskStore? {
    try TaskerHome.checkPrivate(databasePath: home.databasePath)
    // lstat: a dangling symlink exists, and `reading` refuses it.
    guard FileStatus.exists(home.databasePath) else { return nil }
    return try reading(home: home, keys: keys)
  }

  /// How many calls the gate has queued for the user's approval and not
  /// yet approved or denied: for the notice `list` prints. One count over
  /// the approvals table; nothing is opened, no key is asked for.
  ///
  /// - Throws: `TaskerError.database`.
  public func pendingApprovalCount() throws -> Int {
    Int(
      try connection.prepare("SELECT count(*) FROM gate_approvals WHERE status = ?")
        .first([.text(Self.pendingApprovalStatus)]) { $0.integer(0) } ?? 0)
  }

  /// The `status` of an approval still waiting (GateLedger.swift writes it).
  static let pendingApprovalStatus = "pending"
}
