extension TaskStore {
  /// Version 3 of the schema: the gate's receipts (append-only, enforced
  /// by triggers) and its approval queue.
  static let gateLedgerMigration = """
    CREATE TABLE gate_receipts (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      at INTEGER NOT NULL,
      actor TEXT NOT NULL CHECK (actor IN ('trusted', 'assistant', 'user')),
      key_id TEXT CHECK ((actor = 'assistant') = (key_id IS NOT NULL)),
      assistant TEXT,
      tool TEXT NOT NULL,
      decision TEXT NOT NULL,
      target TEXT NOT NULL,
      summary TEXT NOT NULL,
      undo TEXT CHECK (undo IS NULL OR undo GLOB 'delete-task:[0-9]*' OR undo GLOB 'delete-page:[0-9]*'
        OR undo GLOB 'reopen-task:[0-9]*'),
      undoes INTEGER UNIQUE REFERENCES gate_receipts (id),
      approval INTEGER REFERENCES gate_approvals (id)
    );
    CREATE INDEX gate_receipts_key_at ON gate_receipts (key_id, at);
    CREATE TRIGGER gate_receipts_append_only_update BEFORE UPDATE ON gate_receipts
    BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
    CREATE TRIGGER gate_receipts_append_only_delete BEFORE DELETE ON gate_receipts
    BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
    CREATE TABLE gate_approvals (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      at INTEGER NOT NULL,
      key_id TEXT NOT NULL,
      assistant TEXT NOT NULL,
      tool TEXT NOT NULL,
      arguments TEXT NOT NULL,
      reason TEXT NOT NULL,
      summary TEXT NOT NULL,
      status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied')),
      resolved_at INTEGER
    );
    """

  /// The columns of a receipt row, in table order.
  static let receiptColumns =
    "id, at, actor, key_id, assistant, tool, decision, target, summary, undo, undoes, approval"

  /// A canonical decimal id of 1 to 2^63-1 in `text` (no sign, no leading
  /// zero, nothing else): its integer spelled back must be the same text.
  static func sqlID(_ text: String) -> String {
    "(CAST(\(text) AS INTEGER) >= 1 AND CAST(CAST(\(text) AS INTEGER) AS TEXT) = \(text))"
  }

  /// The bulk-edit target's list, `tasks/<id>,<id>…`, as a JSON array.
  static func sqlBulkList(_ target: String) -> String { "'[' || substr(\(target), 7) || ']'" }

  /// The table of receipts of schema version 4, with every rule of
  /// docs/formats/receipt.md as it was then, as CHECK constraints. Kept
  /// word for word: it is what migration 4 ran, and migration 5 rebuilds
  /// the table with `receiptTable`, whose word lists come from the enums.
  /// A CHECK whose expression is NULL passes in SQLite, so every one that
  /// could be NULL is wrapped in `coalesce(…, 0)`.
  static let receiptTableVersion4 = """
    CREATE TABLE gate_receipts (
      id INTEGER PRIMARY KEY AUTOINCREMENT CHECK (id >= 1),
      at INTEGER NOT NULL CHECK (typeof(at) = 'integer' AND at >= 0),
      actor TEXT NOT NULL CHECK (actor IN ('trusted', 'assistant', 'user')),
      key_id TEXT CHECK (key_id IS NULL OR (typeof(key_id) = 'text' AND key_id GLOB
        'tkid_[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]')),
      assistant TEXT CHECK (assistant IS NULL OR (typeof(assistant) = 'text' AND length(assistant) BETWEEN 1 AND 64)),
      tool TEXT NOT NULL CHECK (tool IN ('add_task', 'edit_task', 'complete_task', 'delete_task', 'add_page', 'undo')),
      decision TEXT NOT NULL CHECK (typeof(decision) = 'text' AND (decision IN ('allow', 'approved', 'denied', 'undone',
        'ask:risky', 'ask:quiet-hours', 'ask:quiet-hours-undecidable', 'refuse:budget-exhausted',
        'refuse:budget-undecidable') OR (decision GLOB 'refuse:missing-grant:[a-z]*' AND length(decision) <= 85
        AND substr(decision, 22) NOT GLOB '*[^a-z0-9._:-]*'))),
      target TEXT NOT NULL CHECK (typeof(target) = 'text'),
      summary TEXT NOT NULL CHECK (typeof(summary) = 'text'),
      undo TEXT CHECK (undo IS NULL OR typeof(undo) = 'text'),
      undoes INTEGER UNIQUE REFERENCES gate_receipts (id)
        CHECK (undoes IS NULL OR (typeof(undoes) = 'integer' AND undoes >= 1 AND undoes < id)),
      approval INTEGER REFERENCES gate_approvals (id)
        CHECK (approval IS NULL OR (typeof(approval) = 'integer' AND approval >= 1)),
      CONSTRAINT receipt_rule_4 CHECK ((actor = 'assistant') = (key_id IS NOT NULL)
        AND (actor = 'assistant') = (assistant IS NOT NULL)),
      CONSTRAINT receipt_rule_5 CHECK (coalesce(CASE actor WHEN 'trusted' THEN decision = 'allow'
        WHEN 'assistant' THEN decision NOT IN ('denied', 'undone') ELSE decision IN ('denied', 'undone') END
        AND (tool = 'undo') = (decision = 'undone'), 0)),
      CONSTRAINT receipt_rule_6 CHECK (coalesce(CASE
        WHEN decision IN ('allow', 'approved') THEN CASE tool
          WHEN 'add_page' THEN target GLOB 'page/*' AND \(sqlID("substr(target, 6)"))
          WHEN 'edit_task' THEN (target GLOB 'task/*' AND \(sqlID("substr(target, 6)")))
            OR (target GLOB 'tasks/[1-9]*,[1-9]*' AND substr(target, 7) NOT GLOB '*[^0-9,]*'
              AND substr(target, 7) NOT GLOB '*,' AND substr(target, 7) NOT GLOB '*,,*'
              AND substr(target, 7) NOT GLOB '*,0*' AND json_valid(\(sqlBulkList("target")))
              AND json_array_length(\(sqlBulkList("target"))) BETWEEN 2 AND 100)
          ELSE target GLOB 'task/*' AND \(sqlID("substr(target, 6)")) END
        WHEN decision GLOB 'ask:*' OR decision = 'denied' THEN target = 'approval/' || approval
        WHEN decision GLOB 'refuse:*' THEN target = ''
        WHEN decision = 'undone' THEN target = 'receipt/' || undoes
        ELSE 0 END, 0)),
      CONSTRAINT receipt_rule_7 CHECK (coalesce(CASE
        WHEN undo IS NULL THEN NOT (decision IN ('allow', 'approved') AND tool IN ('add_task', 'add_page'))
        WHEN decision NOT IN ('allow', 'approved') THEN 0
        WHEN tool = 'add_task' THEN target GLOB 'task/*' AND undo = 'delete-task:' || substr(target, 6)
        WHEN tool = 'complete_task' THEN target GLOB 'task/*' AND undo = 'reopen-task:' || substr(target, 6)
        WHEN tool = 'add_page' THEN target GLOB 'page/*' AND undo = 'delete-page:' || substr(target, 6)
        ELSE 0 END, 0)),
      CONSTRAINT receipt_rule_8 CHECK ((decision = 'undone') = (undoes IS NOT NULL)),
      CONSTRAINT receipt_rule_9 CHECK ((approval IS NOT NULL) = (decision GLOB 'ask:*' OR decision IN ('approved', 'denied')))
    );
    """

  /// Rule 6's part a CHECK cannot say (it needs the list's elements): a
  /// bulk target names 2 to 100 different ids, each 1 to 2^63-1.
  static let bulkTargetIsWrong = """
    NEW.target GLOB 'tasks/*' AND json_valid(\(sqlBulkList("NEW.target"))) AND (
      EXISTS (SELECT 1 FROM json_each(\(sqlBulkList("NEW.target"))) WHERE typeof(value) <> 'integer' OR value < 1)
      OR (SELECT count(DISTINCT value) FROM json_each(\(sqlBulkList("NEW.target"))))
        <> json_array_length(\(sqlBulkList("NEW.target"))))
    """

  /// The triggers that keep receipts append-only: no UPDATE, no DELETE, and
  /// no INSERT that would replace a row (`INSERT OR REPLACE` deletes the row
  /// it conflicts with without firing a DELETE trigger), plus rule 6's
  /// bulk-target check.
  static let receiptTriggers = """
    CREATE INDEX gate_receipts_key_at ON gate_receipts (key_id, at);
    CREATE TRIGGER gate_receipts_append_only_update BEFORE UPDATE ON gate_receipts
    BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
    CREATE TRIGGER gate_receipts_append_only_delete BEFORE DELETE ON gate_receipts
    BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
    CREATE TRIGGER gate_receipts_append_only_insert BEFORE INSERT ON gate_receipts
    WHEN EXISTS (SELECT 1 FROM gate_receipts WHERE id = NEW.id OR undoes = NEW.undoes)
    BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
    CREATE TRIGGER gate_receipts_bulk_target BEFORE INSERT ON gate_receipts WHEN \(bulkTargetIsWrong)
    BEGIN SELECT RAISE(ABORT, 'receipt rule 6: a bulk target names 2 to 100 different task ids'); END;
    """

  /// Version 4 of the schema: `gate_receipts` rebuilt with the rules of
  /// docs/formats/receipt.md. Every existing row is checked as it is
  /// copied; a row that breaks a rule is kept, unchanged, in
  /// `gate_receipts_refused` (append-only too), and while any row is
  /// there every read of receipts is an error naming it, never a receipt
  /// shown as valid. The AUTOINCREMENT counter is carried over, so no
  /// receipt number is ever reused. Foreign keys are checked at commit.
  static let receiptRulesMigration = """
    PRAGMA defer_foreign_keys = ON;
    ALTER TABLE gate_receipts RENAME TO gate_receipts_v3;
    DROP INDEX gate_receipts_key_at;
    \(receiptTableVersion4)
    CREATE TABLE gate_receipts_refused (
      id INTEGER PRIMARY KEY, at, actor, key_id, assistant, tool, decision, target, summary, undo, undoes, approval
    );
    CREATE TRIGGER gate_receipts_refused_update BEFORE UPDATE ON gate_receipts_refused
    BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
    CREATE TRIGGER gate_receipts_refused_delete BEFORE DELETE ON gate_receipts_refused
    BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
    INSERT OR IGNORE INTO gate_receipts (\(receiptColumns))
    SELECT \(receiptColumns) FROM gate_receipts_v3 ORDER BY id;
    DELETE FROM gate_receipts WHERE (undoes IS NOT NULL AND undoes NOT IN (SELECT id FROM gate_receipts))
      OR (approval IS NOT NULL AND approval NOT IN (SELECT id FROM gate_approvals));
    DELETE FROM gate_receipts WHERE \(bulkTargetIsWrong.replacing("NEW.", with: ""));
    INSERT INTO gate_receipts_refused SELECT \(receiptColumns) FROM gate_receipts_v3
    WHERE id NOT IN (SELECT id FROM gate_receipts);
    DELETE FROM sqlite_sequence WHERE name = 'gate_receipts';
    UPDATE sqlite_sequence SET name = 'gate_receipts' WHERE name = 'gate_receipts_v3';
    DROP TABLE gate_receipts_v3;
    \(receiptTriggers)
    """
}
