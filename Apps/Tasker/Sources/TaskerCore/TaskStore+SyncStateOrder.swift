/// Version 11 of the schema: the kept sync states in the order they were
/// written.
extension TaskStore {
  /// Version 11: `sync_records` rebuilt as a rowid table, its rows copied,
  /// with `(kind, uid)` kept unique by an index. Until version 10 the
  /// states (a few KiB each, holding the sealed bodies) were the leaves
  /// of a B-tree keyed by random uids: a first sync or a new device's
  /// pull inserted 10^4 of them at random places, splitting pages all
  /// over the table and spilling the page cache to the log mid-
  /// transaction. Now a new state is appended, and only the small index
  /// entries land at random places. The records without a local row (the
  /// deleted ones, sent again after an epoch change) have an index of their
  /// own, so finding them no longer reads every state. Nothing read or
  /// written changes.
  static let syncStateOrderMigration = """
    CREATE TABLE sync_records_11 (
      kind TEXT NOT NULL CHECK (kind IN ('task', 'page', 'attachment')),
      uid TEXT NOT NULL CHECK (length(uid) = 32 AND uid NOT GLOB '*[^0-9a-f]*'),
      local_id INTEGER,
      state TEXT NOT NULL
    );
    INSERT INTO sync_records_11 (kind, uid, local_id, state) SELECT kind, uid, local_id, state FROM sync_records;
    DROP TABLE sync_records;
    ALTER TABLE sync_records_11 RENAME TO sync_records;
    CREATE UNIQUE INDEX sync_records_uid ON sync_records (kind, uid);
    CREATE UNIQUE INDEX sync_records_local ON sync_records (kind, local_id) WHERE local_id IS NOT NULL;
    CREATE INDEX sync_records_deleted ON sync_records (kind, uid) WHERE local_id IS NULL;
    """
}
