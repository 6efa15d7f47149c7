extension TaskStore {
  /// Leaves the log's checkpoints to `checkpointLog()` on some connection:
  /// this store's commits no longer run SQLite's automatic checkpoint (a
  /// copy of the log into the database file and a sync, inside the write
  /// lock), so a server's calls never wait behind one. The log then grows
  /// until a checkpoint runs; whoever calls this must run them.
  ///
  /// - Throws: `TaskerError.database`.
  public func leaveCheckpointsToCaller() throws {
    try connection.stopAutomaticCheckpoints()
  }

  /// A passive checkpoint: copies the committed log into the database file
  /// and syncs it, without waiting for or blocking readers and writers;
  /// when the database is busy, nothing is done (the next one does it).
  /// A checkpoint never loses a committed change: the log keeps every
  /// frame not yet copied.
  ///
  /// - Throws: `TaskerError.database`.
  public func checkpointLog() throws {
    try connection.checkpointPassively()
  }
}
