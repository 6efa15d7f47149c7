/// Version 5 of the schema: `gate_receipts` rebuilt with word lists made
/// from the vocabulary's enums (GateLedger+Vocabulary.swift), so the
/// table's CHECKs and the Swift types cannot drift apart, and the tables
/// that keep what an undoable change needs to be undone. Version 8 rebuilds
/// the table again from the same `receiptTable` (GateLedgerSchema+Version8.swift).
extension TaskStore {
  /// Words as an SQL list, `'a', 'b'`. The words are raw values of this
  /// build's enums, never input; `GateVocabularyTests` checks that none
  /// holds a quote.
  static func sqlWords(_ words: [String]) -> String {
    words.map { "'\($0)'" }.joined(separator: ", ")
  }

  /// The kind of a decision word: the part before its first colon.
  static let sqlDecisionKind =
    "(CASE WHEN instr(decision, ':') > 0 THEN substr(decision, 1, instr(decision, ':') - 1) ELSE decision END)"

  /// The target a receipt of `tool` names when its call ran.
  static func sqlRanTarget(_ tool: GateTool) -> String {
    let prefix = tool.targetPrefix
    let single = "(target GLOB '\(prefix)*' AND \(sqlID("substr(target, \(prefix.count + 1))")))"
    guard tool == .editTask else { return single }
    return """
      \(single) OR (target GLOB 'tasks/[1-9]*,[1-9]*' AND substr(target, 7) NOT GLOB '*[^0-9,]*'
        AND substr(target, 7) NOT GLOB '*,' AND substr(target, 7) NOT GLOB '*,,*'
        AND substr(target, 7) NOT GLOB '*,0*' AND json_valid(\(sqlBulkList("target")))
        AND json_array_length(\(sqlBulkList("target"))) BETWEEN 2 AND \(GateReceipt.maximumBulkTargets))
      """
  }

  /// Rule 6's target for each decision kind.
  private static func sqlTarget(_ kind: GateDecisionKind) -> String {
    switch kind {
    case .allow, .approved, .changed:
      let tools = GateTool.receiptTools.map { "WHEN '\($0.rawValue)' THEN \(sqlRanTarget($0))" }
      return "CASE tool \(tools.joined(separator: "\n")) ELSE 0 END"
    case .ask, .denied: return "target = 'approval/' || approval"
    case .refuse, .read, .failed: return sqlAggregateTarget(kind)
    case .undone: return "target = 'receipt/' || undoes"
    }
  }

  /// The table of receipts with every rule of docs/formats/receipt.md that
  /// a row can break (rules 3 to 9), as CHECK constraints; every list of
  /// words is made from the enums' cases. A CHECK whose expression is NULL
  /// passes in SQLite, so every one that could be NULL is wrapped in
  /// `coalesce(…, 0)`.
  static var receiptTable: String {
    let kind = sqlDecisionKind
    let ran = sqlWords(GateDecisionKind.ranCases.map(\.rawValue))
    let grant = ReceiptDecision.refuse(.missingGrant("")).rawValue
    let actors = GateActor.allCases.map {
      "WHEN '\($0.rawValue)' THEN \(kind) IN (\(sqlWords($0.decisions.map(\.rawValue))))"
    }
    let targets = GateDecisionKind.allCases.map { "WHEN '\($0.rawValue)' THEN \(sqlTarget($0))" }
    let undos = UndoKind.allCases.map {
      let prefix = $0.tool.targetPrefix
      return "WHEN tool = '\($0.tool.rawValue)' THEN target GLOB '\(prefix)*' "
        + "AND undo = '\($0.rawValue):' || substr(target, \(prefix.count + 1))"
    }
    let required = GateTool.receiptTools.filter { UndoKind.of($0)?.isRequired ?? false }.map(\.rawValue)
    let assistant = GateActor.assistant.rawValue
    let changed = GateDecisionKind.changed.rawValue
    return """
      CREATE TABLE gate_receipts (
        id INTEGER PRIMARY KEY AUTOINCREMENT CHECK (id >= 1),
        at INTEGER NOT NULL CHECK (typeof(at) = 'integer' AND at >= 0),
        actor TEXT NOT NULL CHECK (actor IN (\(sqlWords(GateActor.allCases.map(\.rawValue))))),
        key_id TEXT CHECK (key_id IS NULL OR (typeof(key_id) = 'text' AND key_id GLOB
          'tkid_\(String(repeating: "[0-9a-f]", count: 16))')),
        assistant TEXT CHECK (assistant IS NULL OR (typeof(assistant) = 'text' AND length(assistant) BETWEEN 1 AND 64)),
        tool TEXT NOT NULL CHECK (tool IN (\(sqlWords(GateTool.receiptTools.map(\.rawValue))))),
        decision TEXT NOT NULL CHECK (typeof(decision) = 'text'
          AND (decision IN (\(sqlWords(ReceiptDecision.fixedCases.map(\.rawValue))))
          OR (decision GLOB '\(grant)[a-z]*' AND length(decision) <= \(grant.count + ReceiptRefusal.maximumGrantLength)
          AND substr(decision, \(grant.count + 1)) NOT GLOB '*[^a-z0-9._:-]*'))),
        target TEXT NOT NULL CHECK (typeof(target) = 'text'),
        summary TEXT NOT NULL CHECK (typeof(summary) = 'text'),
        undo TEXT CHECK (undo IS NULL OR typeof(undo) = 'text'),
        undoes INTEGER UNIQUE REFERENCES gate_receipts (id)
          CHECK (undoes IS NULL OR (typeof(undoes) = 'integer' AND undoes >= 1 AND undoes < id)),
        approval INTEGER REFERENCES gate_approvals (id)
          CHECK (approval IS NULL OR (typeof(approval) = 'integer' AND approval >= 1)),
        CONSTRAINT receipt_rule_4 CHECK ((actor = '\(assistant)') = (key_id IS NOT NULL)
          AND (actor = '\(assistant)') = (assistant IS NOT NULL)),
        CONSTRAINT receipt_rule_5 CHECK (coalesce(CASE actor \(actors.joined(separator: " ")) ELSE 0 END
          AND (tool = '\(GateTool.undo.rawValue)') = (decision = '\(ReceiptDecision.undone.rawValue)')
          AND (\(kind) <> '\(changed)'
            OR tool IN (\(sqlWords(GateTool.receiptTools.filter(\.isUserChange).map(\.rawValue)))))
          AND (tool NOT IN (\(sqlWords(GateTool.receiptTools.filter(\.isUserOnly).map(\.rawValue))))
            OR \(kind) = '\(changed)')
          AND \(sqlReadingRule), 0)),
        CONSTRAINT receipt_rule_6 CHECK (coalesce(CASE \(kind)
          \(targets.joined(separator: "\n"))
          ELSE 0 END, 0)),
        CONSTRAINT receipt_rule_7 CHECK (coalesce(CASE
          WHEN undo IS NULL THEN NOT (\(kind) IN (\(ran)) AND tool IN (\(sqlWords(required))))
          WHEN \(kind) NOT IN (\(ran)) THEN 0
          \(undos.joined(separator: "\n"))
          ELSE 0 END, 0)),
        CONSTRAINT receipt_rule_8 CHECK ((decision = '\(ReceiptDecision.undone.rawValue)') = (undoes IS NOT NULL)),
        CONSTRAINT receipt_rule_9 CHECK ((approval IS NOT NULL) = (\(kind) IN (\(
          sqlWords(GateDecisionKind.allCases.filter(\.hasApproval).map(\.rawValue))))))
      );
      """
  }

  /// The copies an undoable change keeps, each bound to its receipt
  /// (GateLedger+Undo.swift): a deleted task's row (its notes exactly as
  /// stored, sealed or plain, never opened) or an edited task's earlier
  /// values of the fields it changed (`fields`, or `*` for the whole row);
  /// a deleted page's row; the attachment rows of a deleted task or page,
  /// whose files stay in `attachments/` until the copy is purged.
  static let undoTables = """
    CREATE TABLE gate_undo_tasks (
      receipt INTEGER PRIMARY KEY REFERENCES gate_receipts (id),
      fields TEXT NOT NULL,
      id INTEGER NOT NULL CHECK (id >= 1),
      title TEXT NOT NULL,
      notes TEXT NOT NULL,
      due TEXT,
      estimate_minutes INTEGER,
      priority INTEGER NOT NULL,
      energy INTEGER,
      status TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      completed_at INTEGER,
      contexts TEXT NOT NULL
    );
    CREATE INDEX gate_undo_tasks_id ON gate_undo_tasks (id);
    CREATE TABLE gate_undo_pages (
      receipt INTEGER PRIMARY KEY REFERENCES gate_receipts (id),
      id INTEGER NOT NULL CHECK (id >= 1),
      title TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    );
    CREATE TABLE gate_undo_attachments (
      receipt INTEGER NOT NULL REFERENCES gate_receipts (id),
      id INTEGER PRIMARY KEY,
      task_id INTEGER,
      page_id INTEGER,
      name TEXT NOT NULL,
      byte_count INTEGER NOT NULL,
      media_type TEXT NOT NULL,
      file TEXT NOT NULL UNIQUE,
      key_id TEXT,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX gate_undo_attachments_receipt ON gate_undo_attachments (receipt);
    """

  /// Version 5 of the schema: `gate_receipts` rebuilt under `receiptTable`
  /// (every rule of version 4 still holds, and the user's own undoable
  /// changes are allowed: decision `changed`, tool `delete_page`, undo
  /// kinds `restore-task`, `restore-page`, `revert-edit`), then the undo
  /// tables. Every row of version 4 is copied; one that breaks a rule
  /// anyway (written with the checks off) is kept unchanged in
  /// `gate_receipts_refused`, as migration 4 does. The AUTOINCREMENT
  /// counter is carried over. Foreign keys are checked at commit.
  static var undoMigration: String {
    """
    PRAGMA defer_foreign_keys = ON;
    ALTER TABLE gate_receipts RENAME TO gate_receipts_v4;
    DROP INDEX gate_receipts_key_at;
    \(receiptTable)
    INSERT OR IGNORE INTO gate_receipts (\(receiptColumns))
    SELECT \(receiptColumns) FROM gate_receipts_v4 ORDER BY id;
    DELETE FROM gate_receipts WHERE (undoes IS NOT NULL AND undoes NOT IN (SELECT id FROM gate_receipts))
      OR (approval IS NOT NULL AND approval NOT IN (SELECT id FROM gate_approvals));
    DELETE FROM gate_receipts WHERE \(bulkTargetIsWrong.replacing("NEW.", with: ""));
    INSERT OR IGNORE INTO gate_receipts_refused SELECT \(receiptColumns) FROM gate_receipts_v4
    WHERE id NOT IN (SELECT id FROM gate_receipts);
    DELETE FROM sqlite_sequence WHERE name = 'gate_receipts';
    UPDATE sqlite_sequence SET name = 'gate_receipts' WHERE name = 'gate_receipts_v4';
    DROP TABLE gate_receipts_v4;
    \(receiptTriggers)
    \(undoTables)
    """
  }
}
