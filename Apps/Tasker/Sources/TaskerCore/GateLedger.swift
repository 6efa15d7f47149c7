import AssistantKeys
import FoundationEssentials
import TaskCrypto

/// One receipt of the assistant gate: who did what, when, what the gate
/// decided, and how to undo it. Receipts are append-only: the database
/// refuses to change or delete one. Every word is a typed value, stored as
/// its raw value (docs/formats/receipt.md).
public struct GateReceipt: Sendable, Equatable {
  /// The receipt's number, shown as `r<id>`.
  public var id: Int64
  /// When, whole seconds since 1970 (UTC).
  public var at: Int64
  /// Trusted mode, an assistant, or the user at the command line.
  public var actor: GateActor
  /// The assistant key's public id, nil for the other actors.
  public var keyID: AssistantKeyID?
  /// The assistant's name, nil for the other actors.
  public var assistant: String?
  /// The tool or command.
  public var tool: GateTool
  /// What was decided.
  public var decision: ReceiptDecision
  /// The record it concerns: `task/<id>`, `tasks/<id>,<id>…`, `page/<id>`,
  /// `approval/<id>`, `receipt/<id>`, or empty.
  public var target: String
  /// A one-line summary without note text or page bodies.
  public var summary: String
  /// How to undo it, or nil when it cannot be undone.
  public var undo: ReceiptUndo?
  /// The receipt this one undid, if it records an undo.
  public var undoes: Int64?
  /// The approval this receipt belongs to, if any.
  public var approval: Int64?

  /// Makes a receipt to append; `id` and `at` are set when it is stored.
  ///
  /// - Parameters: the fields, as documented on each property.
  public init(
    actor: GateActor, keyID: AssistantKeyID?, assistant: String?, tool: GateTool, decision: ReceiptDecision,
    target: String, summary: String, undo: ReceiptUndo? = nil, undoes: Int64? = nil, approval: Int64? = nil
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

/// Where a queued call stands.
public enum ApprovalStatus: String, CaseIterable, Sendable {
  /// Waiting for the user.
  case pending
  /// Approved (and run).
  case approved
  /// Denied; it never runs.
  case denied
}

/// A call the gate queued for the user's approval.
public struct GateApproval: Sendable, Equatable {
  /// The approval's number.
  public var id: Int64
  /// When it was queued, whole seconds since 1970 (UTC).
  public var at: Int64
  /// The public id of the key that asked.
  public var keyID: AssistantKeyID
  /// The assistant's name.
  public var assistant: String
  /// The tool it called.
  public var tool: GateTool
  /// The call's arguments as JSON text, opened (sealed in the database
  /// when encryption is on, bound to `approval/<id>/arguments`).
  public var arguments: String
  /// Why it waits.
  public var reason: AskReason
  /// A one-line summary without note text or page bodies.
  public var summary: String
  /// Pending, approved or denied.
  public var status: ApprovalStatus
}

extension TaskStore {
  /// Runs `body` in one transaction with every write it makes: an action
  /// and its receipt are committed together or not at all.
  ///
  /// - Throws: what `body` throws (nothing is written), `TaskerError.database`.
  public func inOneTransaction<Result>(_ body: () throws -> Result) throws -> Result {
    try connection.transaction(body)
  }

  /// Runs `body` inside the caller's transaction so that its failure can
  /// still be recorded there: when it throws a `TaskerError`, everything
  /// it wrote is rolled back to before it (a savepoint) and the error is
  /// returned, the transaction still open.
  ///
  /// - Returns: what `body` returned, or the `TaskerError` it threw.
  /// - Throws: any other error `body` throws, `TaskerError.database` when
  ///   the savepoint cannot be made or rolled back.
  public func attempt<Success>(_ body: () throws -> Success) throws -> Result<Success, TaskerError> {
    var failure: TaskerError?
    do {
      return .success(
        try connection.savepoint {
          do {
            return try body()
          } catch let error as TaskerError {
            failure = error
            throw error
          }
        })
    } catch let error as TaskerError where failure == error {
      return .failure(error)
    }
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
      // Inside the write transaction: the id AUTOINCREMENT would give, and
      // the newest receipt's chain, which no other writer can move now.
      stored.id =
        try connection.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'gate_receipts'").first {
          $0.integer(0)
        }.map { $0 + 1 } ?? 1
      // A newest row without a chain (written past Tasker) is reported by
      // `--verify`; the write itself never fails for it.
      let chain = ReceiptChain.link(previous: try newestChain() ?? ReceiptChain.genesis, stored)
      try connection.prepare(
        """
        INSERT INTO gate_receipts (id, at, actor, key_id, assistant, tool, decision, target, summary, undo, undoes,
          approval, chain)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
      ).run([
        .integer(stored.id), .integer(stored.at), .text(stored.actor.rawValue), Self.optional(stored.keyID?.text),
        Self.optional(stored.assistant), .text(stored.tool.rawValue), .text(stored.decision.rawValue),
        .text(stored.target), .text(stored.summary), Self.optional(stored.undo?.rawValue),
        stored.undoes.map { .integer($0) } ?? .null,
        stored.approval.map { .integer($0) } ?? .null, .text(chain.lowercaseHex),
      ])
      connection.afterCommit { [weak self] in self?.updateReceiptHead(id: stored.id, chain: chain) }
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
  static let receiptTypes = """
    typeof(at) = 'integer' AND typeof(actor) = 'text' AND typeof(key_id) IN ('text', 'null')
    AND typeof(assistant) IN ('text', 'null') AND typeof(tool) = 'text' AND typeof(decision) = 'text'
    AND typeof(target) = 'text' AND typeof(summary) = 'text' AND typeof(undo) IN ('text', 'null')
    AND typeof(undoes) IN ('integer', 'null') AND typeof(approval) IN ('integer', 'null')
    """

  /// Receipts read and checked row by row: a row the schema-4 rebuild
  /// refused, a value of the wrong type or a broken rule is an error
  /// naming the receipt, never a receipt.
  func checkedReceipts(_ clause: String, _ values: [SQLValue]) throws -> [GateReceipt] {
    let refused = try connection.prepare("SELECT min(id) FROM gate_receipts_refused").first { $0.optionalInteger(0) }
    if let refused = refused ?? nil {
      throw TaskerError.receiptInvalid(id: refused, reason: "it broke a rule of receipt.md when the table was rebuilt")
    }
    return try connection.prepare(
      "SELECT \(Self.receiptColumns), \(Self.receiptTypes) FROM gate_receipts \(clause)"
    ).rows(values) { row in
      guard row.integer(12) == 1 else {
        throw TaskerError.receiptInvalid(id: row.integer(0), reason: "a column holds a value of the wrong type")
      }
      return try Self.receipt(row)
    }
  }

  /// A receipt from the first 12 columns of `row` (`receiptColumns`),
  /// checked against receipt.md.
  static func receipt(_ row: Statement) throws -> GateReceipt {
    try GateReceipt.reading(
      id: row.integer(0), at: row.integer(1), actor: row.text(2), keyID: row.optionalText(3),
      assistant: row.optionalText(4), tool: row.text(5), decision: row.text(6), target: row.text(7),
      summary: row.text(8), undo: row.optionalText(9), undoes: row.optionalInteger(10),
      approval: row.optionalInteger(11))
  }

  /// How many calls of a key were run (allowed, or approved and run) at
  /// or after `since`: what its daily budget counts.
  ///
  /// - Throws: `TaskerError.database`.
  public func actionCount(keyID: AssistantKeyID, since: Int64) throws -> Int {
    // The decisions of a call that ran, bound as parameters: no decision word in the SQL.
    // A call that ran and failed counts too: failing calls cannot write
    // receipts past the budget.
    let ran: [ReceiptDecision] = [.allow, .approved, .failed]
    let count = try connection.prepare(
      "SELECT count(*) FROM gate_receipts WHERE key_id = ? AND at >= ? AND decision IN (?, ?, ?)"
    ).first([.text(keyID.text), .integer(since)] + ran.map { .text($0.rawValue) }) { $0.integer(0) }
    return Int(count ?? 0)
  }

  /// The most approvals one key may have waiting at once: 20.
  public static let pendingApprovalCap = 20
  /// The most bytes of arguments one key's waiting approvals may hold, as
  /// stored (sealed when encryption is on): 2 MiB.
  public static let pendingArgumentBytesCap = 2 * 1024 * 1024

  /// How many approvals of a key are waiting, and the bytes their stored
  /// arguments hold: what the per-key queue caps count. Called inside the
  /// write transaction that queues, so no other writer moves it meanwhile.
  ///
  /// - Throws: `TaskerError.database`.
  public func pendingApprovalLoad(keyID: AssistantKeyID) throws -> (count: Int, bytes: Int) {
    let load = try connection.prepare(
      """
      SELECT count(*), coalesce(sum(length(CAST(arguments AS BLOB))), 0) FROM gate_approvals
      WHERE key_id = ? AND status = ?
      """
    ).first([.text(keyID.text), .text(ApprovalStatus.pending.rawValue)]) { ($0.integer(0), $0.integer(1)) }
    return (Int(load?.0 ?? 0), Int(load?.1 ?? 0))
  }

  /// The `cap` of `TaskerError.approvalQueueFull` for the count cap.
  public static let pendingApprovalsCapName = "pending-approvals"
  /// The `cap` of `TaskerError.approvalQueueFull` for the bytes cap.
  public static let pendingArgumentBytesCapName = "pending-argument-bytes"

  /// Queues a call for approval; its arguments are sealed under
  /// `approval/<id>/arguments` when encryption is on. Both per-key caps
  /// are enforced here, in the write transaction that queues: at most
  /// `pendingApprovalCap` waiting calls and `pendingArgumentBytesCap`
  /// bytes of their arguments as stored, this call's included.
  ///
  /// - Returns: the queued approval.
  /// - Throws: `TaskerError.approvalQueueFull` (nothing written), the key
  ///   source's errors (nothing written), `TaskerError.database`.
  public func enqueueApproval(
    keyID: AssistantKeyID, assistant: String, tool: GateTool, arguments: String, reason: AskReason, summary: String
  ) throws -> GateApproval {
    try prepareToSeal(arguments)
    let at = Self.now()
    // A savepoint: a cap found passed after the row is written takes the row back.
    let id = try connection.savepoint { () -> Int64 in
      let load = try pendingApprovalLoad(keyID: keyID)
      guard load.count < Self.pendingApprovalCap else {
        throw TaskerError.approvalQueueFull(cap: Self.pendingApprovalsCapName, limit: Self.pendingApprovalCap)
      }
      try connection.prepare(
        """
        INSERT INTO gate_approvals (at, key_id, assistant, tool, arguments, reason, summary, status)
        VALUES (?, ?, ?, ?, '', ?, ?, ?)
        """
      ).run([
        .integer(at), .text(keyID.text), .text(assistant), .text(tool.rawValue), .text(reason.rawValue),
        .text(summary), .text(ApprovalStatus.pending.rawValue),
      ])
      let id = connection.lastInsertedRowID
      let stored = try storedBody(arguments, context: Self.approvalContext(id))
      guard load.bytes + stored.utf8.count <= Self.pendingArgumentBytesCap else {
        throw TaskerError.approvalQueueFull(
          cap: Self.pendingArgumentBytesCapName, limit: Self.pendingArgumentBytesCap)
      }
      try connection.prepare("UPDATE gate_approvals SET arguments = ? WHERE id = ?").run([.text(stored), .integer(id)])
      return id
    }
    return GateApproval(
      id: id, at: at, keyID: keyID, assistant: assistant, tool: tool, arguments: arguments, reason: reason,
      summary: summary, status: .pending)
  }

  /// Approvals, oldest first; with `pendingOnly`, only those waiting.
  /// Arguments are not opened (the field is empty): `approval(id:)` opens them.
  ///
  /// - Throws: `TaskerError.approvalInvalid` naming the first row with a
  ///   word no Tasker writes (none is returned then), `.database`.
  public func approvals(pendingOnly: Bool) throws -> [GateApproval] {
    // The status is bound; every status matches `?2 IS NULL`.
    try connection.prepare(
      """
      SELECT id, at, key_id, assistant, tool, '', reason, summary, status FROM gate_approvals
      WHERE ?1 IS NULL OR status = ?1 ORDER BY id
      """
    ).rows([pendingOnly ? .text(ApprovalStatus.pending.rawValue) : .null], Self.approval)
  }

  /// One approval, or nil when there is none; its arguments opened when
  /// `openingArguments` (else empty, and no key is needed: a denial never
  /// opens them).
  ///
  /// - Throws: `TaskerError.approvalInvalid`, the key source's errors,
  ///   `.sealedBodyUnreadable`, `.database`.
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
        "UPDATE gate_approvals SET status = ?, resolved_at = ?, arguments = '' WHERE id = ? AND status = ?"
      ).run([
        .text((approved ? ApprovalStatus.approved : .denied).rawValue), .integer(Self.now()), .integer(id),
        .text(ApprovalStatus.pending.rawValue),
      ])
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

  /// An approval row read through the words' initialisers: a word no
  /// Tasker writes is an error naming the approval, never a default.
  private static func approval(_ row: Statement) throws -> GateApproval {
    let id = row.integer(0)
    func word<Word: RawRepresentable>(_ column: Int32, _ name: String, _ type: Word.Type) throws -> Word
    where Word.RawValue == String {
      guard let word = Word(rawValue: row.text(column)) else {
        throw TaskerError.approvalInvalid(id: id, reason: "its \(name) is not one Tasker writes")
      }
      return word
    }
    guard let keyID = AssistantKeyID(row.text(2)) else {
      throw TaskerError.approvalInvalid(id: id, reason: "its key_id is not tkid_ and 16 lowercase hex digits")
    }
    return GateApproval(
      id: id, at: row.integer(1), keyID: keyID, assistant: row.text(3), tool: try word(4, "tool", GateTool.self),
      arguments: row.text(5), reason: try word(6, "reason", AskReason.self), summary: row.text(7),
      status: try word(8, "status", ApprovalStatus.self))
  }
}
