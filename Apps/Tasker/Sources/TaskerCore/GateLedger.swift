import FoundationEssentials
import TaskCrypto

/// One receipt of the assistant gate: who did what, when, what the gate
/// decided, and how to undo it. Receipts are append-only: the database
/// refuses to change or delete one.
public struct GateReceipt: Sendable, Equatable {
  /// The receipt's number, shown as `r<id>`.
  public var id: Int64
  /// When, whole seconds since 1970 (UTC).
  public var at: Int64
  /// `trusted` (stdio without a key), `assistant` (a verified key) or
  /// `user` (an approval, denial or undo from the command line).
  public var actor: String
  /// The assistant key's public id (`tkid_…`), nil for the other actors.
  public var keyID: String?
  /// The assistant's name, nil for the other actors.
  public var assistant: String?
  /// The tool or command: `add_task`, `complete_task`, `undo`, `approve`…
  public var tool: String
  /// The decision word: `allow`, `ask:<reason>`, `refuse:<reason>`,
  /// `approved`, `denied` or `undone`.
  public var decision: String
  /// The record it concerns: `task/<id>`, `page/<id>`, `approval/<id>`,
  /// `receipt/<id>`, or empty.
  public var target: String
  /// A one-line summary without note text or page bodies.
  public var summary: String
  /// How to undo it: `delete-task:<id>`, `delete-page:<id>`,
  /// `reopen-task:<id>`, or nil when it cannot be undone.
  public var undo: String?
  /// The receipt this one undid, if it records an undo.
  public var undoes: Int64?
  /// The approval this receipt belongs to, if any.
  public var approval: Int64?

  /// Makes a receipt to append; `id` and `at` are set when it is stored.
  ///
  /// - Parameters: the fields, as documented on each property.
  public init(
    actor: String, keyID: String?, assistant: String?, tool: String, decision: String, target: String,
    summary: String, undo: String? = nil, undoes: Int64? = nil, approval: Int64? = nil
  ) {
    self.id = 0
    self.at = 0
    self.actor = actor
    self.keyID = keyID
    self.assistant = assistant
    self.tool = tool
    self.decision = decision
    self.target = target
    self.summary = summary
    self.undo = undo
    self.undoes = undoes
    self.approval = approval
  }
}

/// A call the gate queued for the user's approval.
public struct GateApproval: Sendable, Equatable {
  /// The approval's number.
  public var id: Int64
  /// When it was queued, whole seconds since 1970 (UTC).
  public var at: Int64
  /// The public id of the key that asked.
  public var keyID: String
  /// The assistant's name.
  public var assistant: String
  /// The tool it called.
  public var tool: String
  /// The call's arguments as JSON text, opened (sealed in the database
  /// when encryption is on, bound to `approval/<id>/arguments`).
  public var arguments: String
  /// Why it waits: `risky`, `quiet-hours` or `quiet-hours-undecidable`.
  public var reason: String
  /// A one-line summary without note text or page bodies.
  public var summary: String
  /// `pending`, `approved` or `denied`.
  public var status: String
}

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

  /// Runs `body` in one transaction with every write it makes: an action
  /// and its receipt are committed together or not at all.
  ///
  /// - Throws: what `body` throws (nothing is written), `TaskerError.database`.
  public func inOneTransaction<Result>(_ body: () throws -> Result) throws -> Result {
    try connection.transaction(body)
  }

  /// Appends a receipt, stamped now.
  ///
  /// - Returns: the stored receipt with its id and time.
  /// - Throws: `TaskerError.database` (for example when `undoes` names a
  ///   receipt that was already undone).
  @discardableResult
  public func appendReceipt(_ receipt: GateReceipt) throws -> GateReceipt {
    var stored = receipt
    stored.at = Self.now()
    try connection.transaction {
      try connection.prepare(
        """
        INSERT INTO gate_receipts (at, actor, key_id, assistant, tool, decision, target, summary, undo, undoes, approval)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
      ).run([
        .integer(stored.at), .text(stored.actor), Self.optional(stored.keyID), Self.optional(stored.assistant),
        .text(stored.tool), .text(stored.decision), .text(stored.target), .text(stored.summary),
        Self.optional(stored.undo), stored.undoes.map { .integer($0) } ?? .null,
        stored.approval.map { .integer($0) } ?? .null,
      ])
      stored.id = connection.lastInsertedRowID
    }
    return stored
  }

  /// The newest receipts first, each checked against receipt.md.
  ///
  /// - Parameter limit: the most to return.
  /// - Throws: `TaskerError.receiptInvalid` naming the first receipt that
  ///   breaks a rule (none is returned then), `.database`.
  public func receipts(limit: Int = 100) throws -> [GateReceipt] {
    try checkedReceipts("ORDER BY id DESC LIMIT ?", [.integer(Int64(max(0, limit)))])
  }

  /// One receipt, checked, or nil when there is none with this id.
  ///
  /// - Throws: `TaskerError.receiptInvalid`, `.database`.
  public func receipt(id: Int64) throws -> GateReceipt? {
    try checkedReceipts("WHERE id = ?", [.integer(id)]).first
  }

  /// The receipt that undid receipt `id`, checked, if any.
  ///
  /// - Throws: `TaskerError.receiptInvalid`, `.database`.
  public func receipt(undoing id: Int64) throws -> GateReceipt? {
    try checkedReceipts("WHERE undoes = ?", [.integer(id)]).first
  }

  /// Every column's storage class as the format needs it, as one 0/1 column.
  private static let receiptTypes = """
    typeof(at) = 'integer' AND typeof(actor) = 'text' AND typeof(key_id) IN ('text', 'null')
    AND typeof(assistant) IN ('text', 'null') AND typeof(tool) = 'text' AND typeof(decision) = 'text'
    AND typeof(target) = 'text' AND typeof(summary) = 'text' AND typeof(undo) IN ('text', 'null')
    AND typeof(undoes) IN ('integer', 'null') AND typeof(approval) IN ('integer', 'null')
    """

  /// Receipts read and checked row by row: a row the schema-4 rebuild
  /// refused, a value of the wrong type or a broken rule is an error
  /// naming the receipt, never a receipt.
  private func checkedReceipts(_ clause: String, _ values: [SQLValue]) throws -> [GateReceipt] {
    let refused = try connection.prepare("SELECT min(id) FROM gate_receipts_refused").first { $0.optionalInteger(0) }
    if let refused = refused ?? nil {
      throw TaskerError.receiptInvalid(id: refused, reason: "it broke a rule of receipt.md when the table was rebuilt")
    }
    return try connection.prepare(
      "SELECT \(Self.receiptColumns), \(Self.receiptTypes) FROM gate_receipts \(clause)"
    ).rows(values) { row in
      let receipt = Self.receipt(row)
      guard row.integer(12) == 1 else {
        throw TaskerError.receiptInvalid(id: receipt.id, reason: "a column holds a value of the wrong type")
      }
      try receipt.check()
      return receipt
    }
  }

  /// How many calls of a key were run (allowed, or approved and run) at
  /// or after `since`: what its daily budget counts.
  ///
  /// - Throws: `TaskerError.database`.
  public func actionCount(keyID: String, since: Int64) throws -> Int {
    let count = try connection.prepare(
      "SELECT count(*) FROM gate_receipts WHERE key_id = ? AND at >= ? AND decision IN ('allow', 'approved')"
    ).first([.text(keyID), .integer(since)]) { $0.integer(0) }
    return Int(count ?? 0)
  }

  /// Queues a call for approval; its arguments are sealed under
  /// `approval/<id>/arguments` when encryption is on.
  ///
  /// - Returns: the queued approval.
  /// - Throws: the key source's errors (nothing written), `TaskerError.database`.
  public func enqueueApproval(
    keyID: String, assistant: String, tool: String, arguments: String, reason: String, summary: String
  ) throws -> GateApproval {
    try prepareToSeal(arguments)
    let at = Self.now()
    let id = try connection.transaction { () -> Int64 in
      try connection.prepare(
        "INSERT INTO gate_approvals (at, key_id, assistant, tool, arguments, reason, summary) VALUES (?, ?, ?, ?, '', ?, ?)"
      ).run([.integer(at), .text(keyID), .text(assistant), .text(tool), .text(reason), .text(summary)])
      let id = connection.lastInsertedRowID
      let stored = try storedBody(arguments, context: Self.approvalContext(id))
      try connection.prepare("UPDATE gate_approvals SET arguments = ? WHERE id = ?").run([.text(stored), .integer(id)])
      return id
    }
    return GateApproval(
      id: id, at: at, keyID: keyID, assistant: assistant, tool: tool, arguments: arguments, reason: reason,
      summary: summary, status: "pending")
  }

  /// Approvals, oldest first; with `pendingOnly`, only those waiting.
  /// Arguments are not opened (the field is empty): `approval(id:)` opens them.
  ///
  /// - Throws: `TaskerError.database`.
  public func approvals(pendingOnly: Bool) throws -> [GateApproval] {
    let condition = pendingOnly ? "WHERE status = 'pending'" : ""
    return try connection.prepare(
      "SELECT id, at, key_id, assistant, tool, '', reason, summary, status FROM gate_approvals \(condition) ORDER BY id"
    ).rows([], Self.approval)
  }

  /// One approval, or nil when there is none; its arguments opened when
  /// `openingArguments` (else empty, and no key is needed: a denial never
  /// opens them).
  ///
  /// - Throws: the key source's errors, `TaskerError.sealedBodyUnreadable`,
  ///   `.database`.
  public func approval(id: Int64, openingArguments: Bool = true) throws -> GateApproval? {
    let arguments = openingArguments ? "arguments" : "''"
    guard
      var found = try connection.prepare(
        "SELECT id, at, key_id, assistant, tool, \(arguments), reason, summary, status FROM gate_approvals WHERE id = ?"
      ).first([.integer(id)], Self.approval)
    else { return nil }
    if openingArguments { found.arguments = try sealer.open(found.arguments, context: Self.approvalContext(id)) }
    return found
  }

  /// Moves a pending approval to `approved` or `denied` and drops its
  /// arguments, which nothing needs any more (the receipt keeps the
  /// summary), so no key has to open or keep them.
  ///
  /// - Returns: false when it was no longer pending (nothing changed).
  /// - Throws: `TaskerError.database`.
  public func resolveApproval(id: Int64, approved: Bool) throws -> Bool {
    try connection.transaction {
      try connection.prepare(
        "UPDATE gate_approvals SET status = ?, resolved_at = ?, arguments = '' WHERE id = ? AND status = 'pending'"
      ).run([.text(approved ? "approved" : "denied"), .integer(Self.now()), .integer(id)])
      return connection.changes == 1
    }
  }

  /// Deletes a page (the undo of an addition).
  ///
  /// - Throws: `TaskerError.notFound`, `.database`.
  public func deletePage(id: Int64) throws {
    try connection.transaction {
      try connection.prepare("DELETE FROM pages WHERE id = ?").run([.integer(id)])
      guard connection.changes == 1 else { throw TaskerError.notFound(kind: .page, id: id) }
    }
  }

  /// A setting of the gate (quiet hours, budgets), nil when unset.
  ///
  /// - Parameter name: the setting, without its `gate.` prefix.
  /// - Throws: `TaskerError.database`.
  public func gateSetting(_ name: String) throws -> String? {
    try setting("gate." + name)
  }

  /// Sets a gate setting, or removes it when `value` is nil.
  ///
  /// - Throws: `TaskerError.database`.
  public func setGateSetting(_ name: String, _ value: String?) throws {
    guard let value else {
      try connection.transaction {
        try connection.prepare("DELETE FROM settings WHERE name = ?").run([.text("gate." + name)])
      }
      return
    }
    try setSetting("gate." + name, value)
  }

  static func approvalContext(_ id: Int64) -> String { "approval/\(id)/arguments" }

  private static func optional(_ text: String?) -> SQLValue { text.map { .text($0) } ?? .null }

  private static func receipt(_ row: Statement) -> GateReceipt {
    var receipt = GateReceipt(
      actor: row.text(2), keyID: row.optionalText(3), assistant: row.optionalText(4), tool: row.text(5),
      decision: row.text(6), target: row.text(7), summary: row.text(8), undo: row.optionalText(9),
      undoes: row.optionalInteger(10), approval: row.optionalInteger(11))
    receipt.id = row.integer(0)
    receipt.at = row.integer(1)
    return receipt
  }

  private static func approval(_ row: Statement) -> GateApproval {
    GateApproval(
      id: row.integer(0), at: row.integer(1), keyID: row.text(2), assistant: row.text(3), tool: row.text(4),
      arguments: row.text(5), reason: row.text(6), summary: row.text(7), status: row.text(8))
  }
}
