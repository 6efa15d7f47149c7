import TaskCrypto

/// The copies undoable changes keep (`gate_undo_tasks`, `gate_undo_pages`,
/// `gate_undo_attachments`), made and put back by SQL that copies the
/// stored values as they are: a sealed note or body is never opened to be
/// kept or restored. Every kept row read back is checked first.
extension TaskStore {
  /// Copies task `id` into `gate_undo_tasks`, bound to `receipt`.
  func keepTask(_ id: Int64, receipt: Int64, fields: String) throws {
    try connection.prepare(
      """
      INSERT INTO gate_undo_tasks (receipt, fields, \(Self.keptTaskColumns))
      SELECT ?, ?, \(Self.keptTaskColumns) FROM tasks WHERE id = ?
      """
    ).run([.integer(receipt), .text(fields), .integer(id)])
  }

  /// Copies the attachment rows of `owner`, bound to `receipt`.
  func keepAttachments(of owner: AttachmentOwner, receipt: Int64) throws {
    // Only the two fixed column names of `AttachmentOwner.column` are joined into the SQL.
    let (column, id) = owner.column
    try connection.prepare(
      """
      INSERT INTO gate_undo_attachments (receipt, \(Self.keptAttachmentColumns))
      SELECT ?, \(Self.keptAttachmentColumns) FROM attachments WHERE \(column) = ?
      """
    ).run([.integer(receipt), .integer(id)])
  }

  /// Seals the kept earlier notes of an edit when they are plain, not
  /// empty and encryption is on, under `task/<id>/notes` (where they
  /// return), so no plain text outlives the edit.
  func sealKeptNotes(receipt: Int64, task id: Int64) throws {
    guard
      let notes = try connection.prepare("SELECT notes FROM gate_undo_tasks WHERE receipt = ?")
        .first([.integer(receipt)], { $0.text(0) }),
      !notes.isEmpty, !SealedValue.isSealed(notes), try bodyEncryption()
    else { return }
    let sealed = try sealer.seal(notes, context: BodyContext.notes(ofTask: id), using: try sealer.currentKeyring())
    try connection.prepare("UPDATE gate_undo_tasks SET notes = ? WHERE receipt = ?")
      .run([.text(sealed), .integer(receipt)])
  }

  /// The kept attachment rows of `receipt`, unchecked.
  func keptAttachmentRows(receipt: Int64) throws -> [AttachmentRow] {
    try connection.prepare("SELECT \(AttachmentRow.keptColumns) FROM gate_undo_attachments WHERE receipt = ?")
      .rows([.integer(receipt)], AttachmentRow.init)
  }

  /// The file names the kept attachment rows name (only names Tasker
  /// makes): files that stay in `attachments/` for an undo, which `tasker
  /// doctor` must not report as orphans.
  func keptAttachmentFileNames() throws -> Set<String> {
    let rows = try connection.prepare("SELECT \(AttachmentRow.keptColumns) FROM gate_undo_attachments")
      .rows(AttachmentRow.init)
    return Set(rows.compactMap { try? $0.location().name })
  }

  /// The `fields` of the kept task copy of `receipt` for task `id`.
  ///
  /// - Throws: `TaskerError.notUndoable` when there is none (purged).
  private func keptTaskFields(receipt: Int64, task id: Int64) throws -> String {
    guard
      let fields = try connection.prepare("SELECT fields FROM gate_undo_tasks WHERE receipt = ? AND id = ?")
        .first([.integer(receipt), .integer(id)], { $0.text(0) })
    else { throw TaskerError.notUndoable(receipt: receipt, reason: "its kept copy was purged") }
    return fields
  }

  /// Puts back a deleted task and its attachments from the copy of
  /// `receipt`, and drops the copy.
  func restoreTask(receipt: Int64, task id: Int64) throws {
    guard try keptTaskFields(receipt: receipt, task: id) == Self.wholeRow else {
      throw TaskerError.notUndoable(receipt: receipt, reason: "its kept copy is not a whole task")
    }
    try connection.prepare(
      """
      INSERT INTO tasks (\(Self.keptTaskColumns))
      SELECT \(Self.keptTaskColumns) FROM gate_undo_tasks WHERE receipt = ?
      """
    ).run([.integer(receipt)])
    try restoreAttachments(receipt: receipt, owner: .task(id))
    try connection.prepare("DELETE FROM gate_undo_tasks WHERE receipt = ?").run([.integer(receipt)])
    try connection.truncateLog()
  }

  /// Puts back a deleted page and its attachments from the copy of
  /// `receipt`, and drops the copy.
  func restorePage(receipt: Int64, page id: Int64) throws {
    try connection.prepare(
      """
      INSERT INTO pages (\(Self.keptPageColumns))
      SELECT \(Self.keptPageColumns) FROM gate_undo_pages WHERE receipt = ? AND id = ?
      """
    ).run([.integer(receipt), .integer(id)])
    guard connection.changes == 1 else {
      throw TaskerError.notUndoable(receipt: receipt, reason: "its kept copy was purged")
    }
    try restoreAttachments(receipt: receipt, owner: .page(id))
    try connection.prepare("DELETE FROM gate_undo_pages WHERE receipt = ?").run([.integer(receipt)])
    try connection.truncateLog()
  }

  /// Puts back the kept attachment rows of `receipt`, each checked first:
  /// its file a name Tasker makes, for `owner` (whose row is back).
  private func restoreAttachments(receipt: Int64, owner: AttachmentOwner) throws {
    let expected: (task: Int64?, page: Int64?)
    switch owner {
    case .task(let id): expected = (id, nil)
    case .page(let id): expected = (nil, id)
    }
    for row in try keptAttachmentRows(receipt: receipt) {
      _ = try row.location()
      guard row.record.taskID == expected.task, row.record.pageID == expected.page else {
        throw TaskerError.attachmentRefused(
          record: "attachment/\(row.record.id)", reason: "its kept copy names another owner")
      }
    }
    try connection.prepare(
      """
      INSERT INTO attachments (\(Self.keptAttachmentColumns))
      SELECT \(Self.keptAttachmentColumns) FROM gate_undo_attachments WHERE receipt = ?
      """
    ).run([.integer(receipt)])
    try connection.prepare("DELETE FROM gate_undo_attachments WHERE receipt = ?").run([.integer(receipt)])
  }

  /// Puts back the fields an edit changed from the copy of `receipt`, and
  /// drops the copy.
  ///
  /// - Returns: the fields' names, for the undo's summary.
  func revertEdit(receipt: Int64, task id: Int64) throws -> String {
    let text = try keptTaskFields(receipt: receipt, task: id)
    let fields = text.split(separator: ",", omittingEmptySubsequences: false).map {
      KeptTaskField(rawValue: String($0))
    }
    guard !fields.isEmpty, fields.allSatisfy({ $0 != nil }) else {
      throw TaskerError.notUndoable(receipt: receipt, reason: "its kept copy names a field Tasker does not keep")
    }
    let columns = fields.compactMap { $0?.rawValue }
    try requireTask(id)
    // Only KeptTaskField's column names are joined into the SQL; the receipt and id are bound.
    let assignments = columns.map { "\($0) = (SELECT \($0) FROM gate_undo_tasks WHERE receipt = ?1)" }
    try connection.prepare("UPDATE tasks SET \(assignments.joined(separator: ", ")) WHERE id = ?2")
      .run([.integer(receipt), .integer(id)])
    try connection.prepare("DELETE FROM gate_undo_tasks WHERE receipt = ?").run([.integer(receipt)])
    try connection.truncateLog()
    return columns.joined(separator: ", ")
  }

  /// Every kept note and body that is not empty, with its record
  /// (`task/<id>/notes`, `page/<id>/body`): for the key commands.
  func keptBodies() throws -> [(table: String, receipt: Int64, context: String, value: String)] {
    let notes = try connection.prepare(
      "SELECT receipt, id, notes FROM gate_undo_tasks WHERE notes <> '' ORDER BY receipt"
    )
    .rows { ("gate_undo_tasks", $0.integer(0), BodyContext.notes(ofTask: $0.integer(1)), $0.text(2)) }
    let bodies = try connection.prepare(
      "SELECT receipt, id, body FROM gate_undo_pages WHERE body <> '' ORDER BY receipt"
    )
    .rows { ("gate_undo_pages", $0.integer(0), BodyContext.body(ofPage: $0.integer(1)), $0.text(2)) }
    return notes + bodies
  }

  /// Replaces one kept note or body.
  func setKeptBody(table: String, receipt: Int64, _ value: String) throws {
    let column = table == "gate_undo_tasks" ? "notes" : "body"
    // `table` and `column` are the two constants of `keptBodies()`.
    try connection.prepare("UPDATE \(table) SET \(column) = ? WHERE receipt = ?").run([.text(value), .integer(receipt)])
  }
}
