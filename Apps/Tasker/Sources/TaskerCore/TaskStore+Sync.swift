import CommandKit
import FoundationEssentials
import TaskCrypto

/// The store's side of sync (docs/formats/sync-storage.md): the tables
/// that remember each record's synced state, which records changed since,
/// the other devices' positions and the objects not yet uploaded. The
/// engine (TaskerSync) decides; this only reads and writes rows, inside one
/// write transaction per step.
extension TaskStore {
  /// Version 9: the sync tables, and triggers that note every change to a
  /// task or page row, whoever makes it (a command, the gate, an undo).
  static let syncMigration = """
    CREATE TABLE sync_records (
      kind TEXT NOT NULL CHECK (kind IN ('task', 'page')),
      uid TEXT NOT NULL CHECK (length(uid) = 32 AND uid NOT GLOB '*[^0-9a-f]*'),
      local_id INTEGER,
      state TEXT NOT NULL,
      PRIMARY KEY (kind, uid)
    ) WITHOUT ROWID;
    CREATE UNIQUE INDEX sync_records_local ON sync_records (kind, local_id) WHERE local_id IS NOT NULL;
    CREATE TABLE sync_dirty (
      kind TEXT NOT NULL CHECK (kind IN ('task', 'page')),
      local_id INTEGER NOT NULL,
      PRIMARY KEY (kind, local_id)
    ) WITHOUT ROWID;
    """ + syncTriggers + """
      CREATE TABLE sync_devices (
        device TEXT PRIMARY KEY CHECK (length(device) = 32),
        name TEXT,
        last_seq INTEGER NOT NULL CHECK (last_seq >= 0),
        last_made INTEGER,
        last_seen INTEGER
      ) WITHOUT ROWID;
      CREATE TABLE sync_outbox (
        seq INTEGER PRIMARY KEY CHECK (seq >= 1),
        object BLOB NOT NULL
      );
      CREATE TABLE sync_values (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) WITHOUT ROWID;
      """

  /// The triggers that note every change to a task or page row in
  /// `sync_dirty` (version 9; made again by version 10, which rebuilds
  /// that table).
  static let syncTriggers = """
    CREATE TRIGGER sync_task_added AFTER INSERT ON tasks BEGIN
      INSERT OR IGNORE INTO sync_dirty (kind, local_id) VALUES ('task', new.id); END;
    CREATE TRIGGER sync_task_changed AFTER UPDATE ON tasks BEGIN
      INSERT OR IGNORE INTO sync_dirty (kind, local_id) VALUES ('task', new.id); END;
    CREATE TRIGGER sync_task_deleted AFTER DELETE ON tasks BEGIN
      INSERT OR IGNORE INTO sync_dirty (kind, local_id) VALUES ('task', old.id); END;
    CREATE TRIGGER sync_page_added AFTER INSERT ON pages BEGIN
      INSERT OR IGNORE INTO sync_dirty (kind, local_id) VALUES ('page', new.id); END;
    CREATE TRIGGER sync_page_changed AFTER UPDATE ON pages BEGIN
      INSERT OR IGNORE INTO sync_dirty (kind, local_id) VALUES ('page', new.id); END;
    CREATE TRIGGER sync_page_deleted AFTER DELETE ON pages BEGIN
      INSERT OR IGNORE INTO sync_dirty (kind, local_id) VALUES ('page', old.id); END;
    """

  /// The page cache of a store that syncs (8 MiB, four times SQLite's
  /// default): a first sync or a new device's pull writes every record's
  /// state in one transaction, and with 2 MiB most pages of the indexes
  /// were written to the log and read back several times. Since the
  /// states are appended (schema 11) half of the 16 MiB it was buys
  /// nearly nothing, and a pull, which now holds two objects' payloads at
  /// once (`SyncObjectStream`), stays well under 64 MiB.
  static let syncCacheKiB = 8_192

  /// Sets the store's connection up for sync's large transactions: the
  /// page cache of `syncCacheKiB`, and statement journals (copies of the
  /// pages a statement changes, kept so it can be undone alone) and other
  /// temporary data in memory rather than in temporary files, so they
  /// are neither written nor left on the disk. Neither setting changes
  /// what a commit makes durable (`synchronous` stays FULL).
  ///
  /// - Throws: `TaskerError.database`.
  public func prepareForSync() throws {
    try connection.execute("PRAGMA temp_store = MEMORY")
    try connection.execute("PRAGMA cache_size = -\(Self.syncCacheKiB)")
  }

  /// Runs `body` in one write transaction with the sync tables: all of it
  /// commits, or none.
  ///
  /// - Throws: what `body` throws, `TaskerError.database`.
  public func withSyncTransaction<Result>(_ body: (SyncRows) throws -> Result) throws -> Result {
    try syncTransaction(triggersOff: false, body)
  }

  /// Runs `body` as `withSyncTransaction` does, with this connection's
  /// triggers off for the whole transaction: for applying other devices'
  /// records, whose writes to tasks, pages and attachments must not be
  /// marked as changed here (the change triggers would mark each row, to
  /// be unmarked at once). `body` writes nothing but what it applies:
  /// every local change it reads was marked before it began.
  ///
  /// - Throws: what `body` throws, `TaskerError.database` (also when the
  ///   trigger setting does not read back as set).
  public func withSyncApplyTransaction<Result>(_ body: (SyncRows) throws -> Result) throws -> Result {
    try connection.withoutTriggers { try syncTransaction(triggersOff: true, body) }
  }

  /// One write transaction over the sync tables, what the transaction kept
  /// in memory written before it commits.
  private func syncTransaction<Result>(triggersOff: Bool, _ body: (SyncRows) throws -> Result) throws -> Result {
    try connection.transaction {
      let rows = SyncRows(store: self, triggersOff: triggersOff)
      let result = try body(rows)
      try rows.flush()
      return result
    }
  }
}

/// A task's or page's row as sync sees it: the synced columns as JSON
/// values (named as the format's fields) and the body opened.
public struct SyncLocalRow: Sendable, Equatable {
  /// The fields by name.
  public var fields: [String: JSONValue]
  /// The note or page body, opened.
  public var body: String
}

/// The sync tables inside one write transaction (`withSyncTransaction`).
public struct SyncRows {
  let store: TaskStore
  var connection: Connection { store.connection }
  /// What one transaction reads of the vault once: whether bodies are
  /// sealed, and the current note keyring (confirmed at its first use in
  /// the transaction). One sync applies thousands of records; each would
  /// otherwise open the vault again.
  let memo = TransactionMemo()
  /// Whether the transaction runs with the triggers off
  /// (`withSyncApplyTransaction`): no row it writes is marked as changed.
  let triggersOff: Bool

  final class TransactionMemo {
    /// The ids this database had at a target (`formerDevices`).
    var formerDevices: (targetID: String, devices: Set<String>)?
    var bodyEncryption: Bool?
    var keyring: Keyring?
    /// The device's sync clock, read once and written once at commit.
    var clock: UInt64?
    var clockChanged = false
    /// The id the next row `writeRow` adds to a table takes, once read.
    var nextRowIDs: [String: Int64] = [:]
  }

  /// This device's sync clock (0 before the first tick), read once per transaction.
  public func clock() throws -> UInt64 {
    if let known = memo.clock { return known }
    let read = UInt64(try value("clock") ?? "0") ?? 0
    memo.clock = read
    return read
  }

  /// Sets the sync clock; written to the database when the transaction ends.
  public func setClock(_ time: UInt64) {
    memo.clock = time
    memo.clockChanged = true
  }

  /// Writes what the transaction kept in memory (the clock).
  func flush() throws {
    if memo.clockChanged, let clock = memo.clock {
      try setValue("clock", String(clock))
      memo.clockChanged = false
    }
  }

  init(store: TaskStore, triggersOff: Bool) {
    self.store = store
    self.triggersOff = triggersOff
  }

  /// Whether bodies are sealed, read once per transaction.
  func bodyEncryption() throws -> Bool {
    if let known = memo.bodyEncryption { return known }
    let read = try store.bodyEncryption()
    memo.bodyEncryption = read
    return read
  }

  /// The note keyring current at the transaction's first seal.
  func currentKeyring() throws -> Keyring {
    if let known = memo.keyring { return known }
    let read = try store.sealer.currentKeyring()
    memo.keyring = read
    return read
  }

  static let taskColumns = [
    "title", "due", "estimate_minutes", "priority", "energy", "status", "completed_at", "contexts", "created_at",
  ]
  static let pageColumns = ["title", "created_at", "updated_at"]
  static let textColumns: Set<String> = ["title", "due", "status", "contexts"]

  static func localContext(_ kind: String, _ id: Int64) -> String {
    kind == "task" ? BodyContext.notes(ofTask: id) : BodyContext.body(ofPage: id)
  }

  // MARK: - Changed records

  /// How many rows `forEachDirty` and `forEachState` read at a time.
  static let pageRows: Int64 = 1_000

  /// Calls `body` with every row changed since it was last synced, as
  /// kind and local id: pages, then tasks, then attachments (so that their
  /// owners get their identities first), each by local id. The rows are
  /// read a page at a time by their primary key, so however many changed,
  /// only a page of them is in memory; `body` may write anything but
  /// `sync_dirty`.
  public func forEachDirty(_ body: (_ kind: String, _ localID: Int64) throws -> Void) throws {
    let page = try connection.prepare(
      "SELECT local_id FROM sync_dirty WHERE kind = ? AND local_id > ? ORDER BY local_id LIMIT ?")
    for kind in ["page", "task", "attachment"] {
      var after = Int64.min
      while case let ids = try page.rows([.text(kind), .integer(after), .integer(Self.pageRows)], { $0.integer(0) }),
        let last = ids.last
      {
        for id in ids { try body(kind, id) }
        after = last
      }
    }
  }

  /// Marks every task and page as changed, so the next object carries
  /// the state of each (after setup).
  public func markEverythingDirty() throws {
    try connection.execute(
      """
      INSERT OR IGNORE INTO sync_dirty (kind, local_id) SELECT 'task', id FROM tasks;
      INSERT OR IGNORE INTO sync_dirty (kind, local_id) SELECT 'page', id FROM pages;
      INSERT OR IGNORE INTO sync_dirty (kind, local_id) SELECT 'attachment', id FROM attachments;
      """)
  }

  /// Forgets that any row changed (once every one noted was captured).
  public func clearAllDirty() throws {
    try connection.execute("DELETE FROM sync_dirty")
  }

  /// Forgets that a row changed.
  public func clearDirty(kind: String, localID: Int64) throws {
    try connection.prepare("DELETE FROM sync_dirty WHERE kind = ? AND local_id = ?")
      .run([.text(kind), .integer(localID)])
  }

  /// The row as sync sees it, its body opened; nil when no row has the id.
  ///
  /// - Throws: the key source's errors, `TaskerError.sealedBodyUnreadable`.
  public func localRow(kind: String, localID: Int64) throws -> SyncLocalRow? {
    let sql = Self.rowStatements(kind)
    let columns = sql.columns
    guard
      let (fields, stored) = try connection.prepare(sql.select).first(
        [.integer(localID)],
        { row in
          var fields: [String: JSONValue] = [:]
          for (index, name) in columns.enumerated() {
            let column = Int32(index)
            if Self.textColumns.contains(name) {
              fields[name] = row.optionalText(column).map(JSONValue.string) ?? .null
            } else {
              fields[name] = row.optionalInteger(column).map(JSONValue.integer) ?? .null
            }
          }
          return (fields, row.text(Int32(columns.count)))
        })
    else { return nil }
    return SyncLocalRow(fields: fields, body: try store.sealer.open(stored, context: Self.localContext(kind, localID)))
  }

  // MARK: - Synced states

  /// The state kept for the record `uid`, with its local row's id.
  public func state(kind: String, uid: String) throws -> (localID: Int64?, state: [UInt8])? {
    try connection.prepare("SELECT local_id, state FROM sync_records WHERE kind = ? AND uid = ?")
      .first([.text(kind), .text(uid)]) { (localID: $0.optionalInteger(0), state: $0.utf8(1)) }
  }

  /// The state kept for the local row `localID`, with its uid.
  public func state(kind: String, localID: Int64) throws -> (uid: String, state: [UInt8])? {
    try connection.prepare("SELECT uid, state FROM sync_records WHERE kind = ? AND local_id = ?")
      .first([.text(kind), .integer(localID)]) { (uid: $0.text(0), state: $0.utf8(1)) }
  }

  /// Calls `body` with every kept state by kind and uid; with
  /// `deletedOnly`, only those without a local row (deleted here or
  /// elsewhere: what marking every row dirty cannot reach). Read a page
  /// at a time by their index, as `forEachDirty` reads; `body` may write
  /// states, but not change a uid.
  public func forEachState(
    deletedOnly: Bool = false, _ body: ((kind: String, uid: String, localID: Int64?, state: [UInt8])) throws -> Void
  ) throws {
    let page = try connection.prepare(
      "SELECT kind, uid, local_id, state FROM sync_records WHERE (kind, uid) > (?, ?)"
        + (deletedOnly ? " AND local_id IS NULL" : "") + " ORDER BY kind, uid LIMIT ?")
    var after = (kind: "", uid: "")
    while case let states = try page.rows(
      [.text(after.kind), .text(after.uid), .integer(Self.pageRows)],
      { (kind: $0.text(0), uid: $0.text(1), localID: $0.optionalInteger(2), state: $0.utf8(3)) }),
      let last = states.last
    {
      for state in states { try body(state) }
      after = (last.kind, last.uid)
    }
  }

  /// Keeps `state` for the record `uid`, linked to its local row.
  public func putState(kind: String, uid: String, localID: Int64?, state: [UInt8]) throws {
    try connection.prepare(
      """
      INSERT INTO sync_records (kind, uid, local_id, state) VALUES (?, ?, ?, ?)
      ON CONFLICT (kind, uid) DO UPDATE SET local_id = excluded.local_id, state = excluded.state
      """
    ).run([
      .text(kind), .text(uid), localID.map(SQLValue.integer) ?? .null, .utf8(state),
    ])
  }

  // MARK: - Layer 2 at the storage

  /// Seals `text` (even empty) under the primary note key for a sync
  /// context (`sync/<kind>/<uid>/<version>`).
  ///
  /// - Throws: the key source's errors, `TaskerError.sealingFailed`.
  public func sealForSync(_ text: String, context: String) throws -> String {
    do {
      return try SealedValue.seal(text, using: try currentKeyring(), context: context)
    } catch let error as TaskCryptoError {
      throw TaskerError.sealingFailed(record: context, cause: error)
    }
  }

  /// Opens a text sealed for a sync context; a plain text is refused.
  ///
  /// - Throws: `TaskerError.sealedBodyUnreadable`, the key source's errors.
  public func openFromSync(_ text: String, context: String) throws -> String {
    guard SealedValue.isSealed(text) else {
      throw TaskerError.sealedBodyUnreadable(record: context, cause: .unsupportedVersion("plain"))
    }
    return try store.sealer.open(text, context: context)
  }
}
