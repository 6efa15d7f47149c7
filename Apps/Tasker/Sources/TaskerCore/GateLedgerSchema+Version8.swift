/// Version 8 of the schema: `gate_receipts` rebuilt from `receiptTable`
/// with the words of reads and refusals (decisions `read`, `failed`,
/// `refuse:queue-full`, `refuse:read-budget-exhausted`,
/// `refuse:read-budget-undecidable`, `refuse:rate-limited`; the reading
/// tools), every row of version 7 copied with its chain value unchanged.
extension TaskStore {
  /// Rule 6's target for `refuse`, `read` and `failed`: `refusals/<N>` for
  /// `refuse:rate-limited`, empty for every other refusal; `reads/<N>` for
  /// `read`; empty or the ran target of the tool for `failed`.
  static func sqlAggregateTarget(_ kind: GateDecisionKind) -> String {
    func counted(_ prefix: String) -> String {
      "(target GLOB '\(prefix)[1-9]*' AND \(sqlID("substr(target, \(prefix.count + 1))")))"
    }
    switch kind {
    case .refuse:
      return "CASE decision WHEN '\(ReceiptDecision.refuse(.rateLimited).rawValue)' THEN \(counted("refusals/"))"
        + " ELSE target = '' END"
    case .read: return counted("reads/")
    case .failed:
      let tools = GateTool.receiptTools.map { "WHEN '\($0.rawValue)' THEN \(sqlRanTarget($0))" }
      return "target = '' OR CASE tool \(tools.joined(separator: "\n")) ELSE 0 END"
    case .allow, .ask, .approved, .denied, .undone, .changed: return "0"
    }
  }

  /// Rule 5's reading part: a reading tool goes only with `read` or a
  /// refusal that fits reads, every other tool with neither (a
  /// `missing-grant` refusal fits actions only).
  static var sqlReadingRule: String {
    let kind = sqlDecisionKind
    let reads = sqlWords(GateTool.readTools.map(\.rawValue))
    func refusals(_ fits: (ReceiptRefusal) -> Bool) -> String {
      sqlWords(ReceiptRefusal.fixedCases.filter(fits).map { ReceiptDecision.refuse($0).rawValue })
    }
    let read = GateDecisionKind.read.rawValue
    let refuse = GateDecisionKind.refuse.rawValue
    let grant = ReceiptDecision.refuse(.missingGrant("")).rawValue
    return """
      (CASE WHEN tool IN (\(reads)) THEN \(kind) = '\(read)' OR decision IN (\(refusals(\.fitsReads)))
        ELSE \(kind) <> '\(read)' AND (\(kind) <> '\(refuse)' OR decision IN (\(refusals(\.fitsActions)))
          OR decision GLOB '\(grant)*') END)
      """
  }

  /// The tables whose rows name a receipt (`receipt REFERENCES gate_receipts`).
  static let keptCopyTables = ["gate_undo_tasks", "gate_undo_pages", "gate_undo_attachments"]

  /// The name the table of version 8 is built under, beside the old one.
  static let rebuiltReceiptTable = "gate_receipts_v8"

  /// Version 8 of the schema, its SQL part: the new table beside the old
  /// one, under `receiptTable` (every rule of version 7 still holds for
  /// the words it had), with the `chain` column added as version 7 added
  /// it. Its reference to itself names its own name, which the rename
  /// into place follows. `copyReceiptsIntoVersionEight` does the rest.
  static var readsMigration: String {
    let table = rebuiltReceiptTable
    let create = receiptTable.replacing("CREATE TABLE gate_receipts (", with: "CREATE TABLE \(table) (")
      .replacing("REFERENCES gate_receipts (id)", with: "REFERENCES \(table) (id)")
    return """
      PRAGMA defer_foreign_keys = ON;
      \(create)
      ALTER TABLE \(table) ADD COLUMN chain TEXT;
      """
  }

  /// Version 8's copy: every row of version 7 copied as it is, chain
  /// value too, so no canonical byte and no link changes. The copy runs
  /// with CHECK constraints off, so a row that broke a rule anyway
  /// (written with the checks off) stays where it was and is still an
  /// error naming it on every read and in `--verify`, never dropped. The
  /// AUTOINCREMENT counter is carried over.
  ///
  /// The old table is dropped and the new one renamed into place, so the
  /// kept copies' `REFERENCES gate_receipts` name the new table (renaming
  /// the old one away would rewrite them to follow it). The kept copies
  /// wait in temporary tables meanwhile: the drop would otherwise count
  /// them as orphans, which fails the commit. Last, the table of open
  /// tallies (GateTallies.swift).
  static func copyReceiptsIntoVersionEight(_ connection: Connection) throws {
    let table = rebuiltReceiptTable
    try connection.execute("PRAGMA ignore_check_constraints = ON")
    do {
      try connection.execute(
        """
        INSERT INTO \(table) (\(receiptColumns), chain) SELECT \(receiptColumns), chain FROM gate_receipts ORDER BY id
        """)
    } catch {
      try connection.execute("PRAGMA ignore_check_constraints = OFF")
      throw error
    }
    try connection.execute("PRAGMA ignore_check_constraints = OFF")
    let keep = keptCopyTables.map { "CREATE TEMP TABLE \($0)_v8 AS SELECT * FROM \($0);\nDELETE FROM \($0);" }
    let back = keptCopyTables.map { "INSERT INTO \($0) SELECT * FROM temp.\($0)_v8;\nDROP TABLE temp.\($0)_v8;" }
    try connection.execute(
      """
      DELETE FROM sqlite_sequence WHERE name = '\(table)';
      UPDATE sqlite_sequence SET name = '\(table)' WHERE name = 'gate_receipts';
      \(keep.joined(separator: "\n"))
      DROP TABLE gate_receipts;
      ALTER TABLE \(table) RENAME TO gate_receipts;
      \(back.joined(separator: "\n"))
      \(receiptTriggers)
      \(talliesTable)
      """)
  }
}
