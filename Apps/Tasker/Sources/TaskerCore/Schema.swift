/// The database schema and its forward migrations.
///
/// The version lives in SQLite's `user_version`. A database at version N
/// is brought to `current` by running migrations N+1 … current, all in one
/// transaction; a database newer than this build is refused, never
/// touched.
enum Schema {
  /// One step from version `index` to `index + 1`.
  static let migrations: [String] = [
    // Version 1: tasks, pages, attachments and settings.
    """
    CREATE TABLE tasks (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      title TEXT NOT NULL,
      notes TEXT NOT NULL DEFAULT '',
      due TEXT CHECK (due IS NULL OR due GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
      estimate_minutes INTEGER CHECK (estimate_minutes IS NULL OR estimate_minutes >= 0),
      priority INTEGER NOT NULL DEFAULT 0 CHECK (priority BETWEEN 0 AND 3),
      energy INTEGER CHECK (energy IS NULL OR energy BETWEEN 1 AND 3),
      status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done')),
      created_at INTEGER NOT NULL,
      completed_at INTEGER,
      contexts TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX tasks_status_due ON tasks (status, due);
    CREATE TABLE pages (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      title TEXT NOT NULL,
      body TEXT NOT NULL DEFAULT '',
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    );
    CREATE TABLE attachments (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      task_id INTEGER REFERENCES tasks (id) ON DELETE CASCADE,
      page_id INTEGER REFERENCES pages (id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      byte_count INTEGER NOT NULL CHECK (byte_count >= 0),
      media_type TEXT NOT NULL,
      file TEXT NOT NULL UNIQUE,
      key_id TEXT,
      created_at INTEGER NOT NULL,
      CHECK ((task_id IS NULL) <> (page_id IS NULL))
    );
    CREATE INDEX attachments_task ON attachments (task_id);
    CREATE INDEX attachments_page ON attachments (page_id);
    CREATE TABLE settings (
      name TEXT PRIMARY KEY,
      value TEXT NOT NULL
    ) WITHOUT ROWID;
    """,
    // Version 2: one covering index in listing order, so `list` and the plan
    // context read the index alone and never the pages that hold note bodies.
    """
    DROP INDEX tasks_status_due;
    CREATE INDEX tasks_listing ON tasks (
      due IS NULL, due, id, status, title, estimate_minutes, priority, energy, contexts
    );
    """,
    // Version 3: the assistant gate's receipts and approval queue (GateLedger.swift).
    TaskStore.gateLedgerMigration,
    // Version 4: gate_receipts rebuilt with every rule of receipt.md, rows checked (GateLedgerSchema.swift).
    TaskStore.receiptRulesMigration,
    // Version 5: gate_receipts rebuilt with word lists from the vocabulary's enums, and the copies an
    // undoable change keeps (GateLedgerSchema+Version5.swift).
    TaskStore.undoMigration,
    // Version 6: tasks.plan_order and the provider log (TaskStore+Planning.swift).
    TaskStore.planningMigration,
    // Version 7: each receipt's chain value (GateReceiptChain.swift); existing rows are chained by
    // `afterStep[7]`, with the update trigger dropped for that fill only.
    TaskStore.chainMigration,
    // Version 8: gate_receipts rebuilt with the words of reads and refusals; rows and chain values are
    // copied by `afterStep[8]` (GateLedgerSchema+Version8.swift).
    TaskStore.readsMigration,
    // Version 9: the sync tables and the triggers that note changed rows (TaskStore+Sync.swift).
    TaskStore.syncMigration,
    // Version 10: attachments as sync records: their rows noted, remote contents, blobs to upload
    // (TaskStore+SyncAttachments.swift).
    TaskStore.syncAttachmentsMigration,
    // Version 11: the kept sync states in a rowid table, appended as they are written
    // (TaskStore+SyncStateOrder.swift).
    TaskStore.syncStateOrderMigration,
  ]

  /// Work a migration needs Swift for, run right after the SQL of the step
  /// that reaches the version (the key), in the same transaction.
  static let afterStep: [Int: (Connection) throws -> Void] = [
    7: TaskStore.chainExistingReceipts, 8: TaskStore.copyReceiptsIntoVersionEight,
  ]

  /// The version this build writes.
  static var current: Int { migrations.count }

  /// Whether the database is at `current`, read without a transaction (a
  /// read-only connection's check before it reads).
  ///
  /// - Throws: `TaskerError.databaseTooNew` for a newer database,
  ///   `TaskerError.database`, `.notADatabase`.
  static func isCurrent(_ connection: Connection) throws -> Bool {
    try version(connection) == current
  }

  /// The database's schema version, checked before it is used: the
  /// database is data, and `user_version` is whatever a writer put there.
  ///
  /// - Returns: a version from 0 to `current`.
  /// - Throws: `TaskerError.databaseTooNew` above `current`,
  ///   `.damagedDatabase` below 0 (no Tasker writes one), `.database`.
  static func version(_ connection: Connection) throws -> Int {
    let version = try connection.prepare("PRAGMA user_version").first { $0.integer(0) } ?? 0
    guard version >= 0 else {
      throw TaskerError.damagedDatabase(
        path: connection.path, reason: "schema version \(version) is none that Tasker writes (0 to \(current))")
    }
    guard version <= current else {
      throw TaskerError.databaseTooNew(path: connection.path, version: Int(version), supported: current)
    }
    return Int(version)
  }

  /// Brings the database to `current`.
  ///
  /// - Throws: `TaskerError.databaseTooNew` for a newer database,
  ///   `.damagedDatabase` for a negative version (nothing is changed),
  ///   `TaskerError.database` when a migration fails (it is rolled
  ///   back whole).
  static func migrate(_ connection: Connection) throws {
    try connection.transaction {
      let version = try version(connection)
      guard version < current else { return }
      for (offset, step) in migrations[version...].enumerated() {
        try connection.execute(step)
        try afterStep[version + offset + 1]?(connection)
      }
      // PRAGMA takes no bound parameters; `current` is a constant of this build.
      try connection.execute("PRAGMA user_version = \(current)")
    }
  }
}
