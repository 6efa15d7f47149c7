import CSQLite
import Synchronization

/// One SQLite connection, configured the way SQLite's authors advise:
/// write-ahead logging, foreign keys enforced, a busy timeout, and every
/// statement prepared with bound parameters. A connection that writes
/// also syncs the log at every commit (`synchronous = FULL`, so a change
/// is on the disk before `COMMIT` returns and before anything is
/// acknowledged) and overwrites deleted content with zeros
/// (`secure_delete = ON`); both are read back after they are set. Only the
/// store's files see the C API; no C type leaves this folder.
final class Connection {
  /// The database file.
  let path: String
  private let handle: OpaquePointer
  private var cache: [String: Statement] = [:]
  private var transactionDepth = 0

  /// How long a writer waits for another process's lock before giving up.
  static let busyTimeoutMilliseconds: Int32 = 5000

  /// Opens (creating when `create` is true) the database at `path` and
  /// applies the connection settings. A `readOnly` connection takes no
  /// write lock, sets no pragma that writes (the file is in WAL mode
  /// already) and refuses every change with `SQLITE_READONLY`.
  ///
  /// - Throws: `TaskerError.databaseNotFound` when the file is missing and
  ///   `create` is false; `TaskerError.database` for any SQLite failure,
  ///   and when `synchronous` or `secure_delete` does not read back as set.
  init(path: String, create: Bool, readOnly: Bool = false) throws {
    precondition(!(create && readOnly), "a read-only connection cannot create its database")
    self.path = path
    var flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
    if create { flags |= SQLITE_OPEN_CREATE }
    var opened: OpaquePointer?
    let code = sqlite3_open_v2(path, &opened, flags, nil)
    guard let opened else {
      throw TaskerError.database(path: path, code: code, message: "cannot allocate a connection")
    }
    guard code == SQLITE_OK else {
      let message = String(cString: sqlite3_errmsg(opened))
      sqlite3_close_v2(opened)
      if code == SQLITE_CANTOPEN && !create { throw TaskerError.databaseNotFound(path: path) }
      throw TaskerError.database(path: path, code: code, message: message)
    }
    handle = opened
    sqlite3_extended_result_codes(handle, 1)
    do {
      try check(sqlite3_busy_timeout(handle, Self.busyTimeoutMilliseconds))
      if readOnly { return }
      // Takes effect only on a new, empty database (before WAL and the
      // first table): 16 KiB pages hold about ten sealed 1 KiB notes each.
      try execute("PRAGMA page_size = 16384")
      try execute("PRAGMA foreign_keys = ON")
      try execute("PRAGMA journal_mode = WAL")
      // FULL: the log is synced before COMMIT returns (NORMAL syncs it only
      // at a checkpoint, so a power cut could lose an acknowledged change).
      try execute("PRAGMA synchronous = FULL")
      try require("synchronous", is: Self.synchronousFull)
      // Deleted and overwritten content becomes zeros, whatever SQLite's
      // build default (Debian's is on, SQLite's own is off).
      try execute("PRAGMA secure_delete = ON")
      try require("secure_delete", is: 1)
    } catch {
      sqlite3_close_v2(handle)
      throw error
    }
  }

  /// The value `PRAGMA synchronous` reads back as for FULL.
  static let synchronousFull: Int64 = 2

  /// Throws unless `PRAGMA name` reads back as `expected`.
  private func require(_ name: String, is expected: Int64) throws {
    let value = try prepare("PRAGMA \(name)").first { $0.integer(0) }
    guard value == expected else {
      throw TaskerError.database(
        path: path, code: SQLITE_ERROR,
        message: "PRAGMA \(name) reads \(value.map(String.init) ?? "nothing") after setting it to \(expected)")
    }
  }

  deinit {
    cache.removeAll()
    sqlite3_close_v2(handle)
  }

  /// Runs fixed SQL that takes no parameters (pragmas, schema changes),
  /// stepping every statement in it to the end.
  ///
  /// - Throws: `TaskerError.database`.
  func execute(_ sql: String) throws {
    try check(sqlite3_exec(handle, sql, nil, nil, nil))
  }

  /// A prepared statement for `sql`, reused across calls (reset and with
  /// its bindings cleared). Values are always bound, never spliced in.
  ///
  /// - Throws: `TaskerError.database` when `sql` does not compile.
  func prepare(_ sql: String) throws -> Statement {
    if let cached = cache[sql] {
      cached.reset()
      return cached
    }
    let statement = try Statement(connection: self, handle: handle, sql: sql)
    cache[sql] = statement
    return statement
  }

  /// Runs `body` in one transaction: `BEGIN IMMEDIATE` (so the write lock
  /// is taken up front), `COMMIT` when it returns, `ROLLBACK` when it
  /// throws. Nested calls join the outer transaction.
  ///
  /// - Throws: what `body` throws (after rolling back), `TaskerError.database`.
  func transaction<Result>(_ body: () throws -> Result) throws -> Result {
    if transactionDepth > 0 { return try body() }
    try prepare("BEGIN IMMEDIATE").run()
    transactionDepth = 1
    defer { transactionDepth = 0 }
    do {
      let result = try body()
      try prepare("COMMIT").run()
      transactionDepth = 0
      // A checkpoint asked for inside (an edit the gate makes with its
      // receipt) runs once the change is committed; a failure of it does not
      // undo the commit, and a later one truncates the log.
      if truncateAfterCommit { _ = try? truncateLog() }
      let hooks = commitHooks
      commitHooks = []
      for hook in hooks { hook() }
      return result
    } catch {
      truncateAfterCommit = false
      commitHooks = []
      try? prepare("ROLLBACK").run()
      throw error
    }
  }

  /// Runs `body` under a savepoint in the current transaction (or a new
  /// one): when it throws, its writes and the commit hooks it added are
  /// rolled back, the transaction stays open, and the error is rethrown.
  ///
  /// - Throws: what `body` throws (after rolling back to the savepoint),
  ///   `TaskerError.database`.
  func savepoint<Result>(_ body: () throws -> Result) throws -> Result {
    try transaction {
      try prepare("SAVEPOINT attempt").run()
      let hooks = commitHooks.count
      do {
        let result = try body()
        try prepare("RELEASE attempt").run()
        return result
      } catch {
        try prepare("ROLLBACK TO attempt").run()
        try prepare("RELEASE attempt").run()
        commitHooks.removeLast(commitHooks.count - hooks)
        throw error
      }
    }
  }

  /// Runs `body` with this connection's triggers off (no other
  /// connection is affected), and turns them on again however it ends;
  /// each change of the setting is read back. SQLite recompiles the
  /// cached statements once after each change.
  ///
  /// - Throws: what `body` throws; `TaskerError.database` when the
  ///   setting does not read back as set.
  func withoutTriggers<Result>(_ body: () throws -> Result) throws -> Result {
    try setTriggers(on: false)
    let result: Result
    do {
      result = try body()
    } catch {
      try setTriggers(on: true)
      throw error
    }
    try setTriggers(on: true)
    return result
  }

  private func setTriggers(on: Bool) throws {
    var now: Int32 = -1
    try check(tasker_sqlite3_enable_triggers(handle, on ? 1 : 0, &now))
    guard now == (on ? 1 : 0) else {
      throw TaskerError.database(
        path: path, code: SQLITE_ERROR, message: "the triggers read back \(now) after turning them \(on ? "on" : "off")"
      )
    }
  }

  /// What runs once the current transaction has committed, in order
  /// (dropped when it rolls back).
  private var commitHooks: [() -> Void] = []

  /// Runs `hook` right after the current transaction commits (now, when
  /// there is none); a rollback drops it. A hook cannot fail the commit.
  func afterCommit(_ hook: @escaping () -> Void) {
    guard transactionDepth > 0 else { return hook() }
    commitHooks.append(hook)
  }

  /// Set when `truncateLog()` is called inside a transaction: it runs
  /// right after that transaction commits.
  private var truncateAfterCommit = false

  /// Whether the last `truncateLog()` found the log in use by another
  /// connection's read transaction and left it in place.
  private(set) var logKeptByReader = false

  /// Copies every page in the write-ahead log into the database file,
  /// syncs it, and truncates `-wal` to zero bytes, so earlier versions of
  /// changed pages (which may hold text since overwritten or deleted)
  /// remain in neither file. Waits up to the busy timeout for other
  /// connections' read transactions to end; one still reading then keeps
  /// the log, and this returns false (and sets `logKeptByReader`). Called
  /// inside a transaction, it runs after the commit and returns false now.
  ///
  /// - Returns: true when the log was checkpointed and truncated.
  /// - Throws: `TaskerError.database` for any other SQLite failure.
  @discardableResult
  func truncateLog() throws -> Bool {
    guard transactionDepth == 0 else {
      truncateAfterCommit = true
      return false
    }
    truncateAfterCommit = false
    var logFrames: Int32 = 0
    var copied: Int32 = 0
    let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &copied)
    if code & 0xff == SQLITE_BUSY {
      logKeptByReader = true
      return false
    }
    try check(code)
    logKeptByReader = false
    return true
  }

  /// Turns SQLite's automatic checkpoint off on this connection (0 pages):
  /// its commits no longer copy the log into the database file and sync it
  /// while they hold the write lock; `checkpointPassively` does instead.
  ///
  /// - Throws: `TaskerError.database`.
  func stopAutomaticCheckpoints() throws {
    try execute("PRAGMA wal_autocheckpoint = 0")
  }

  /// Copies what it can of the log into the database file and syncs it,
  /// without waiting for or blocking readers and writers (a passive
  /// checkpoint); a busy database is left for the next one.
  ///
  /// - Throws: `TaskerError.database` for any SQLite failure but busy.
  func checkpointPassively() throws {
    let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    if code & 0xff == SQLITE_BUSY { return }
    try check(code)
  }

  /// The rowid of the last row this connection inserted.
  var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

  /// How many rows the last statement changed.
  var changes: Int { Int(sqlite3_changes(handle)) }

  /// How many rows this connection's statements changed since it opened
  /// (rolled back ones too).
  var totalChanges: Int64 { sqlite3_total_changes64(handle) }

  /// The header of the database's WAL index as it is now, read from
  /// SQLite's own mapping of the shared-memory file without a lock or a
  /// system call (`TaskStore.changeStamp()` says why it suffices). The
  /// index begins with two copies of a 48-byte header, which every commit
  /// (of any connection, in any process) rewrites with a new change
  /// counter, the second copy first; a reader takes the first, then the
  /// second, and trusts them only when they are equal, as SQLite's own
  /// readers do. Nil when they differ (a commit being written), or when
  /// the connection has no WAL index mapped (not in WAL mode, or nothing
  /// read yet).
  func walIndexHeader() -> [UInt8]? {
    var file: UnsafeMutablePointer<sqlite3_file>?
    guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK, let file,
      let methods = file.pointee.pMethods, methods.pointee.iVersion >= 2, let map = methods.pointee.xShmMap
    else { return nil }
    var region: UnsafeMutableRawPointer?
    // Region 0 is mapped once the connection has read in WAL mode; without
    // extending (0), an unmapped region comes back as nil.
    guard map(file, 0, 32_768, 0, &region) == SQLITE_OK, let region else { return nil }
    let header = UnsafeRawPointer(region)
    let first = Array(UnsafeRawBufferPointer(start: header, count: 48))
    atomicMemoryFence(ordering: .sequentiallyConsistent)
    let second = Array(UnsafeRawBufferPointer(start: header + 48, count: 48))
    return first == second ? first : nil
  }

  /// Throws a typed error for any code other than `SQLITE_OK`.
  func check(_ code: Int32) throws {
    guard code != SQLITE_OK else { return }
    throw error(code)
  }

  /// The typed error for `code`, with SQLite's message for this connection.
  func error(_ code: Int32) -> TaskerError {
    if code & 0xff == SQLITE_NOTADB { return .notADatabase(path: path) }
    if code & 0xff == SQLITE_BUSY { return .databaseBusy(path: path) }
    return .database(path: path, code: code, message: String(cString: sqlite3_errmsg(handle)))
  }
}
