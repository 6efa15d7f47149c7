import AssistantKeys
import TaskCrypto

/// Who records an undoable change, and with which decision: the user at
/// the command line (`ReceiptAuthor.user`, decision `changed`), or the
/// gate for a call it ran.
public struct ReceiptAuthor: Sendable, Equatable {
  /// Who acted.
  public var actor: GateActor
  /// The assistant key's id, for an assistant.
  public var keyID: AssistantKeyID?
  /// The assistant's name, for an assistant.
  public var assistant: String?
  /// The decision the receipt records: `changed` for the user, `allow`
  /// or `approved` for the gate.
  public var decision: ReceiptDecision
  /// The approval the change ran from, for `approved`.
  public var approval: Int64?

  /// An author of receipts.
  ///
  /// - Parameters: as documented on each property.
  public init(
    actor: GateActor, keyID: AssistantKeyID? = nil, assistant: String? = nil, decision: ReceiptDecision,
    approval: Int64? = nil
  ) {
    self.actor = actor
    self.keyID = keyID
    self.assistant = assistant
    self.decision = decision
    self.approval = approval
  }

  /// The user's own change at the command line.
  public static let user = ReceiptAuthor(actor: .user, decision: .changed)

  func receipt(tool: GateTool, target: String, summary: String, undo: ReceiptUndo?) -> GateReceipt {
    GateReceipt(
      actor: actor, keyID: keyID, assistant: assistant, tool: tool, decision: decision, target: target,
      summary: summary, undo: undo, approval: approval)
  }
}

/// The fields of a task an undoable edit keeps the earlier values of,
/// named by their columns; `gate_undo_tasks.fields` lists them.
enum KeptTaskField: String, CaseIterable {
  case title, notes, due
  case estimateMinutes = "estimate_minutes"
  case priority, energy, contexts

  /// The fields `changes` touches, in declaration order.
  static func changed(by changes: TaskChanges) -> [KeptTaskField] {
    allCases.filter { field in
      switch field {
      case .title: return changes.title != nil
      case .notes: return changes.notes != nil
      case .due: return changes.due != nil
      case .estimateMinutes: return changes.estimateMinutes != nil
      case .priority: return changes.priority != nil
      case .energy: return changes.energy != nil
      case .contexts: return changes.contexts != nil
      }
    }
  }
}

extension TaskStore {
  /// The most copies of undoable changes kept: after each new one, the
  /// oldest beyond this many are purged (their undo is then refused).
  public static let maximumKeptChanges = 100

  /// The columns of a kept task, as in `tasks`.
  static let keptTaskColumns =
    "id, title, notes, due, estimate_minutes, priority, energy, status, created_at, completed_at, contexts"
  /// The columns of a kept page, as in `pages`.
  static let keptPageColumns = "id, title, body, created_at, updated_at"
  /// The columns of a kept attachment, as in `attachments`.
  static let keptAttachmentColumns = "id, task_id, page_id, name, byte_count, media_type, file, key_id, created_at"
  /// `gate_undo_tasks.fields` of a whole row (a deleted task).
  static let wholeRow = "*"

  /// Deletes a task, keeping a copy so that `undo(receipt:)` can put it
  /// back: its row (notes exactly as stored, sealed or plain, never
  /// opened) and its attachment rows, whose files stay in `attachments/`
  /// until the copy is purged. The receipt (tool `delete_task`, undo
  /// `restore-task:<id>`), the copy and the delete are one transaction.
  /// Needs no key.
  ///
  /// Runs in its own transaction, or in the caller's (the gate's, for an
  /// assistant's delete), then purges the copies beyond
  /// `maximumKeptChanges`, whose files are removed only once that
  /// transaction commits.
  ///
  /// - Parameters:
  ///   - id: the task.
  ///   - author: who records it; `.user` for `tasker delete`, the gate's
  ///     author (decision `allow` or `approved`) for a call it runs.
  /// - Returns: the stored receipt; `tasker undo r<id>` undoes it.
  /// - Throws: `TaskerError.notFound`, `.attachmentRefused` (a row whose
  ///   file is not a name Tasker makes: nothing is changed), `.database`.
  @discardableResult
  public func deleteTask(id: Int64, keepingCopyAs author: ReceiptAuthor) throws -> GateReceipt {
    let receipt = try connection.transaction { () -> GateReceipt in
      let task = try task(id: id, openingNotes: false)
      _ = try attachmentFiles(ofTask: id)
      let stored = try appendReceipt(
        author.receipt(
          tool: .deleteTask, target: "task/\(id)", summary: "deleted task \(id) '\(task.title)'",
          undo: ReceiptUndo(.restoreTask, id)))
      try keepTask(id, receipt: stored.id, fields: Self.wholeRow)
      try keepAttachments(of: .task(id), receipt: stored.id)
      try connection.prepare("DELETE FROM tasks WHERE id = ?").run([.integer(id)])
      return stored
    }
    try expireKeptChanges()
    return receipt
  }

  /// Deletes a page, keeping a copy (its row, body exactly as stored, and
  /// its attachment rows, files left in place) for `undo(receipt:)`; the
  /// receipt (tool `delete_page`, undo `restore-page:<id>`), the copy and
  /// the delete are one transaction. Needs no key.
  ///
  /// Runs in its own transaction, then purges the copies beyond
  /// `maximumKeptChanges` (removing their files): call it on its own, not
  /// inside `inOneTransaction`.
  ///
  /// - Parameters:
  ///   - id: the page.
  ///   - author: who records it; `.user` for `tasker page delete`.
  /// - Returns: the stored receipt.
  /// - Throws: `TaskerError.notFound`, `.attachmentRefused`, `.database`.
  @discardableResult
  public func deletePage(id: Int64, keepingCopyAs author: ReceiptAuthor) throws -> GateReceipt {
    let receipt = try connection.transaction { () -> GateReceipt in
      guard
        let title = try connection.prepare("SELECT title FROM pages WHERE id = ?").first([.integer(id)], { $0.text(0) })
      else { throw TaskerError.notFound(kind: .page, id: id) }
      _ = try attachmentFiles(of: .page(id))
      let stored = try appendReceipt(
        author.receipt(
          tool: .deletePage, target: "page/\(id)", summary: "deleted page \(id) '\(title)'",
          undo: ReceiptUndo(.restorePage, id)))
      try connection.prepare(
        "INSERT INTO gate_undo_pages (receipt, \(Self.keptPageColumns)) SELECT ?, \(Self.keptPageColumns) FROM pages WHERE id = ?"
      ).run([.integer(stored.id), .integer(id)])
      try keepAttachments(of: .page(id), receipt: stored.id)
      try connection.prepare("DELETE FROM pages WHERE id = ?").run([.integer(id)])
      return stored
    }
    try expireKeptChanges()
    return receipt
  }

  /// Edits one task, keeping the earlier values of the fields it changes
  /// so that `undo(receipt:)` can put them back (undo `revert-edit:<id>`);
  /// the receipt, the copy and the edit are one transaction. Earlier
  /// notes are kept as stored when sealed; plain earlier notes are sealed
  /// first (under `task/<id>/notes`) when encryption is on, so an edit
  /// leaves no plain text behind, as an edit without undo does not.
  ///
  /// Runs in its own transaction, then purges the copies beyond
  /// `maximumKeptChanges` (removing their files): call it on its own, not
  /// inside `inOneTransaction`.
  ///
  /// - Parameters:
  ///   - id: the task.
  ///   - changes: the fields to change (at least one).
  ///   - author: who records it; `.user` for `tasker edit`.
  /// - Returns: the stored receipt.
  /// - Throws: `TaskerError.notFound`, `.invalidValue` (no field to
  ///   change, an empty title, a negative estimate), the key source's
  ///   errors when notes are sealed (nothing written), `.sealingFailed`,
  ///   `.database`.
  @discardableResult
  public func editTask(id: Int64, _ changes: TaskChanges, keepingCopyAs author: ReceiptAuthor) throws -> GateReceipt {
    let fields = KeptTaskField.changed(by: changes)
    guard !fields.isEmpty else {
      throw TaskerError.invalidValue(field: "changes", reason: "give at least one field to change")
    }
    try check(changes)
    let receipt = try connection.transaction { () -> GateReceipt in
      try requireTask(id)
      let stored = try appendReceipt(
        author.receipt(
          tool: .editTask, target: "task/\(id)",
          summary: "edited task \(id): \(fields.map(\.rawValue).joined(separator: ", "))",
          undo: ReceiptUndo(.revertEdit, id)))
      try keepTask(id, receipt: stored.id, fields: fields.map(\.rawValue).joined(separator: ","))
      if fields.contains(.notes) { try sealKeptNotes(receipt: stored.id, task: id) }
      try applyEdit(id: id, changes)
      return stored
    }
    try expireKeptChanges()
    return receipt
  }

  /// Undoes what a receipt recorded, at most once, and appends the
  /// receipt of the undo (`actor user, tool undo, decision undone`), both
  /// in one transaction: deletes an added task or page, reopens a
  /// completed task, puts back a deleted task or page (with its
  /// attachments) or an edited task's earlier values from the kept copy,
  /// which is then dropped. Needs no key: sealed values go back as stored.
  ///
  /// Before it reads receipt n or looks for the receipt that undid it, it
  /// verifies the whole chain and the head (`requireIntactReceipts()`,
  /// once, in the same write transaction), so a receipt a writer of the
  /// database forged, such as one saying n was undone, decides nothing.
  ///
  /// - Parameter id: the receipt's number.
  /// - Returns: the receipt of the undo.
  /// - Throws: `TaskerError.receiptsTampered` (the chain or head is
  ///   broken: nothing is changed), `.receiptInvalid` (a row breaks
  ///   receipt.md, whichever), `.receiptNotFound`, `.notUndoable` (no
  ///   undo, or its kept copy was purged), `.alreadyUndone`,
  ///   `.notFound` (the record is gone),
  ///   `.attachmentRefused`, `.database` (for example when a task with the
  ///   deleted one's id exists again), the vault's errors other than locked
  ///   (as `verifyReceipts()`).
  @discardableResult
  public func undo(receipt id: Int64) throws -> GateReceipt {
    var removed: [String] = []
    let written = try connection.transaction { () -> GateReceipt in
      try requireIntactReceipts()
      guard let receipt = try receipt(id: id) else { throw TaskerError.receiptNotFound(id: id) }
      guard let undo = receipt.undo else {
        throw TaskerError.notUndoable(
          receipt: id, reason: "\(receipt.tool.rawValue) with decision \(receipt.decision.rawValue) has no undo")
      }
      if let earlier = try self.receipt(undoing: id) { throw TaskerError.alreadyUndone(receipt: id, by: earlier.id) }
      let summary: String
      switch undo.kind {
      case .deleteTask:
        removed = try removeTaskRows(undo.id)
        summary = "deleted task \(undo.id)"
      case .deletePage:
        try deletePage(id: undo.id)
        summary = "deleted page \(undo.id)"
      case .reopenTask:
        try reopenTask(id: undo.id)
        summary = "reopened task \(undo.id)"
      case .restoreTask:
        try restoreTask(receipt: id, task: undo.id)
        summary = "restored task \(undo.id)"
      case .restorePage:
        try restorePage(receipt: id, page: undo.id)
        summary = "restored page \(undo.id)"
      case .revertEdit:
        let fields = try revertEdit(receipt: id, task: undo.id)
        summary = "put back \(fields) of task \(undo.id)"
      }
      return try appendReceipt(
        GateReceipt(
          actor: .user, keyID: nil, assistant: nil, tool: .undo, decision: .undone, target: "receipt/\(id)",
          summary: "undid r\(id): \(summary)", undoes: id))
    }
    // After the commit: a crash in between leaves unreferenced files, never a row without its file.
    for file in removed { files.remove(attachmentsDirectory + "/" + file) }
    return written
  }

  /// The receipts that can be undone now, newest first: they carry an
  /// undo, were not undone, and their kept copy (for a restore or a
  /// revert) is still there. An undo can still fail when its record
  /// changed since (a task deleted for good).
  ///
  /// - Parameter limit: the most to return.
  /// - Throws: `TaskerError.receiptInvalid` (as `receipts(limit:)`), `.database`.
  public func undoableChanges(limit: Int = 100) throws -> [GateReceipt] {
    let kept = UndoKind.allCases.filter(\.usesKeptCopy)
    return try checkedReceipts(
      """
      WHERE undo IS NOT NULL AND id NOT IN (SELECT undoes FROM gate_receipts WHERE undoes IS NOT NULL)
      AND (substr(undo, 1, instr(undo, ':') - 1) NOT IN (\(Array(repeating: "?", count: kept.count).joined(separator: ", ")))
        OR id IN (SELECT receipt FROM gate_undo_tasks) OR id IN (SELECT receipt FROM gate_undo_pages))
      ORDER BY id DESC LIMIT ?
      """, kept.map { .text($0.rawValue) } + [.integer(Int64(max(0, limit)))])
  }

  /// Purges the copies undoable changes keep, all but the newest
  /// `keepingNewest`: their rows are deleted (`secure_delete` overwrites
  /// the freed pages), the files of their attachments removed, and the
  /// log checkpointed and truncated, so the sealed notes, bodies and
  /// files of purged deletes are gone from `tasker.db`, `-wal` and
  /// `attachments/`. Their receipts stay; undoing one is then refused.
  ///
  /// - Parameter keepingNewest: how many of the newest copies to keep.
  /// - Returns: how many copies were purged.
  /// - Throws: `TaskerError.database` (nothing is purged then).
  @discardableResult
  public func purgeUndoHistory(keepingNewest: Int = 0) throws -> Int {
    let purged = try connection.transaction { () -> Int in
      var removed: [String] = []
      let receipts = try connection.prepare(
        """
        SELECT receipt FROM (SELECT receipt FROM gate_undo_tasks UNION SELECT receipt FROM gate_undo_pages)
        ORDER BY receipt DESC LIMIT -1 OFFSET ?
        """
      ).rows([.integer(Int64(max(0, keepingNewest)))]) { $0.integer(0) }
      for receipt in receipts {
        // A row whose file is not a name Tasker makes is dropped and its file left alone.
        removed += try keptAttachmentRows(receipt: receipt).compactMap { try? $0.location().name }
        for table in ["gate_undo_attachments", "gate_undo_tasks", "gate_undo_pages"] {
          try connection.prepare("DELETE FROM \(table) WHERE receipt = ?").run([.integer(receipt)])
        }
      }
      // Once committed (at once when this is its own transaction): inside
      // a caller's, a rollback keeps the rows and so must keep the files.
      let names = removed
      connection.afterCommit { [weak self] in
        guard let self else { return }
        for file in names { self.files.remove(self.attachmentsDirectory + "/" + file) }
      }
      return receipts.count
    }
    if purged > 0 { try connection.truncateLog() }
    return purged
  }

  /// Purges the oldest copies beyond `maximumKeptChanges`.
  func expireKeptChanges() throws {
    let count =
      try connection.prepare(
        "SELECT (SELECT count(*) FROM gate_undo_tasks) + (SELECT count(*) FROM gate_undo_pages)"
      ).first { $0.integer(0) } ?? 0
    if count > Self.maximumKeptChanges { try purgeUndoHistory(keepingNewest: Self.maximumKeptChanges) }
  }
}
