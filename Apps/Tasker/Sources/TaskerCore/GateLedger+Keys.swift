import TaskAttachments
import TaskCrypto

/// The gate ledger's sealed values in every command that handles keys:
/// the approval queue's arguments (`approval/<id>/arguments`) and the
/// notes and bodies the copies of undoable changes keep (under their
/// records' own contexts, `task/<id>/notes` and `page/<id>/body`).
/// `tasker encrypt` seals plain ones, `tasker rewrap` moves them to the
/// primary key, `tasker keys` (and its `--check`) counts them, with the
/// files of kept attachments, and `tasker keys --values` lists them for
/// `taskkey retire`, so that retiring a key never strands a queued call or
/// an undo. Receipts and settings are plain.
extension TaskStore {
  /// Seals every plain, non-empty approval argument and kept note or
  /// body, in one transaction, under the current primary key (confirmed
  /// inside it).
  ///
  /// - Returns: how many were sealed.
  /// - Throws: the key source's errors, `.sealingFailed`, `.database`
  ///   (nothing is changed then).
  @discardableResult
  public func encryptApprovalArguments() throws -> Int {
    try connection.transaction {
      let plain = try approvalArguments().filter { !SealedValue.isSealed($0.1) }
      let kept = try keptBodies().filter { !SealedValue.isSealed($0.value) }
      guard !plain.isEmpty || !kept.isEmpty else { return 0 }
      let keyring = try sealer.currentKeyring()
      let update = try connection.prepare("UPDATE gate_approvals SET arguments = ? WHERE id = ?")
      for (id, value) in plain {
        try update.run([.text(try sealer.seal(value, context: Self.approvalContext(id), using: keyring)), .integer(id)])
      }
      for body in kept {
        try setKeptBody(
          table: body.table, receipt: body.receipt, try sealer.seal(body.value, context: body.context, using: keyring))
      }
      return plain.count + kept.count
    }
  }

  /// Moves every sealed approval argument (queued or, from older
  /// databases, decided) and every sealed kept note and body (of an
  /// undoable change) to the primary key, in one transaction that holds
  /// the write lock: either all are under the primary key afterwards, or
  /// (when one does not open) none changed.
  ///
  /// - Returns: how many were re-sealed.
  /// - Throws: the key source's errors; `.sealedBodyUnreadable` naming the
  ///   first that does not open (deny that approval, which drops its
  ///   arguments, then run rewrap again); `.database`.
  @discardableResult
  public func rewrapApprovalArguments() throws -> Int {
    try connection.transaction {
      let keyring = try sealer.currentKeyring()
      var moved = 0
      let update = try connection.prepare("UPDATE gate_approvals SET arguments = ? WHERE id = ?")
      for (id, value) in try approvalArguments() where SealedValue.isSealed(value) {
        let context = Self.approvalContext(id)
        let result: (value: String, changed: Bool)
        do {
          result = try SealedValue.reseal(value, using: keyring, context: context)
        } catch let error as TaskCryptoError {
          throw TaskerError.sealedBodyUnreadable(record: context, cause: error)
        }
        guard result.changed else { continue }
        try update.run([.text(result.value), .integer(id)])
        moved += 1
      }
      for body in try keptBodies() where SealedValue.isSealed(body.value) {
        let result: (value: String, changed: Bool)
        do {
          result = try SealedValue.reseal(body.value, using: keyring, context: body.context)
        } catch let error as TaskCryptoError {
          throw TaskerError.sealedBodyUnreadable(record: body.context, cause: error)
        }
        guard result.changed else { continue }
        try setKeptBody(table: body.table, receipt: body.receipt, result.value)
        moved += 1
      }
      return moved
    }
  }

  /// Adds the approval arguments, and the kept notes, bodies and
  /// attachment files of undoable changes, to a key-usage count: per key
  /// id, and the plain and unreadable ones. Reads only the markers and the
  /// files' wrappers: needs no key.
  ///
  /// - Throws: `TaskerError.database`.
  func countApprovalArguments(into usage: inout [String: KeyUsage], report: inout KeyUsageReport) throws {
    // The marker is the first 13 characters, `tc1.<kid>:`.
    let markers = try connection.prepare(
      "SELECT substr(arguments, 1, 64) FROM gate_approvals WHERE arguments <> ''"
    ).rows { $0.text(0) }
    for body in try keptBodies() {
      let keyID: KeyID?
      do {
        keyID = try SealedValue.keyID(of: String(body.value.prefix(64)))
      } catch {
        report.unreadable += 1
        continue
      }
      guard let keyID else {
        report.plainBodies += 1
        continue
      }
      if body.table == "gate_undo_tasks" {
        usage[keyID.hex, default: KeyUsage(keyID: keyID.hex)].taskNotes += 1
      } else {
        usage[keyID.hex, default: KeyUsage(keyID: keyID.hex)].pageBodies += 1
      }
    }
    try countKeptAttachments(into: &usage, report: &report)
    for marker in markers {
      let found: KeyID?
      do {
        found = try SealedValue.keyID(of: marker)
      } catch {
        report.unreadable += 1
        continue
      }
      guard let keyID = found else {
        report.plainBodies += 1
        continue
      }
      usage[keyID.hex, default: KeyUsage(keyID: keyID.hex)].approvalArguments += 1
    }
  }

  /// Every sealed approval argument and kept note or body with its
  /// record, for `taskkey retire KID --input - --field value`.
  ///
  /// - Throws: `TaskerError.database`.
  public func approvalSealedRecords() throws -> [SealedRecord] {
    let arguments = try approvalArguments().filter { SealedValue.isSealed($0.1) }.map {
      SealedRecord(record: Self.approvalContext($0.0), value: $0.1)
    }
    let kept = try keptBodies().filter { SealedValue.isSealed($0.value) }.map {
      SealedRecord(record: $0.context, value: $0.value)
    }
    return arguments + kept
  }

  /// Counts the key each kept attachment file carries (read from its
  /// wrapper, as for live attachments); a row refused or a file that
  /// cannot be read counts as unreadable.
  private func countKeptAttachments(into usage: inout [String: KeyUsage], report: inout KeyUsageReport) throws {
    let rows = try connection.prepare("SELECT \(AttachmentRow.keptColumns) FROM gate_undo_attachments ORDER BY id")
      .rows(AttachmentRow.init)
    for row in rows {
      guard let file = try? row.location(),
        let prefix = try? files.prefix(of: attachmentsDirectory + "/" + file.name, count: Attachment.wrapperByteCount)
      else {
        report.unreadable += 1
        continue
      }
      switch AttachmentHeader(prefix: prefix) {
      case .plain: continue
      case .unreadable: report.unreadable += 1
      case .sealed(let keyID): usage[keyID.hex, default: KeyUsage(keyID: keyID.hex)].attachments += 1
      }
    }
  }

  /// The non-empty stored arguments by approval id (few: one per queued call).
  private func approvalArguments() throws -> [(Int64, String)] {
    try connection.prepare("SELECT id, arguments FROM gate_approvals WHERE arguments <> '' ORDER BY id")
      .rows { ($0.integer(0), $0.text(1)) }
  }
}
