import TaskerCore

/// Applies one record read from another device: the join with the kept
/// state, then the shown values written to the local row (the merge of
/// docs/formats/sync-storage.md, *Applying*).
struct SyncApply {
  let rows: SyncRows
  let capture: SyncCapture
  /// The device whose object is applied, and its seq.
  let writer: String
  let seq: UInt64

  /// Why a record was not applied.
  enum Refusal: Error {
    /// A body text did not open under the note keys with its context.
    case bodyUnreadable
  }

  /// Opens every body text of `record` under the note keys with its
  /// context, before anything of its object is written.
  ///
  /// - Returns: the opened texts by version.
  /// - Throws: `Refusal.bodyUnreadable` (the caller refuses the object),
  ///   the key source's errors.
  func openHeads(_ record: SyncRecord) throws -> [String: String] {
    var opened: [String: String] = [:]
    for (version, head) in record.heads {
      do {
        opened[version] = try rows.openFromSync(head.text, context: record.bodyContext(version: version))
      } catch TaskerError.sealedBodyUnreadable {
        throw Refusal.bodyUnreadable
      }
    }
    return opened
  }

  /// Joins `record` into the kept state and shows the result; `opened`
  /// holds its body texts as `openHeads` opened them, `encoded` the
  /// record's own `storedBytes`, kept as they are when the record is new
  /// here (the join is the record itself).
  ///
  /// - Returns: whether anything changed.
  /// - Throws: the store's and the key source's errors.
  func apply(
    _ record: SyncRecord, opened: [String: String], encoded: [UInt8], removing removed: inout [String]
  ) throws -> Bool {
    if let latest = record.latestClock { try capture.observe(latest) }
    let kind = record.kind.rawValue
    let kept = try rows.state(kind: kind, uid: record.id)
    let before = try kept.map { try SyncRecord.stored($0.state) } ?? SyncRecord(kind: record.kind, id: record.id)
    // Joined with nothing, a record is itself unless it supersedes one of its own heads.
    let joined = kept == nil && record.keepsEveryHead ? record : before.joined(with: record)
    guard joined != before else { return false }
    if record.kind == .attachment {
      // A deletion of an attachment whose blob this database wrote (under this id or one it had here):
      // the blob goes once every device has it.
      if joined.deleted != nil, before.deleted == nil, let content = joined.content, try capture.wroteBlob(of: content)
      {
        try rows.noteDeletedBlob(content.blob, carriedBy: writer, seq: seq, writer: capture.writer(of: content))
      }
      try show(attachment: joined, changed: joined.fields != before.fields, localID: kept?.localID, removing: &removed)
      return true
    }
    let joinedBytes = kept == nil && record.keepsEveryHead ? encoded : joined.storedBytes
    var localID = kept?.localID
    if joined.deleted != nil {
      if let id = localID { removed += try rows.deleteRow(kind: kind, localID: id) }
      localID = nil
    } else {
      let shown = joined.shownVersion
      var body: String?
      if shown != before.shownVersion || localID == nil {
        body =
          try shown.map { version in
            let context = joined.bodyContext(version: version)
            return try opened[version] ?? rows.openFromSync(joined.heads[version]!.text, context: context)
          } ?? ""
      }
      let wasShown = localID != nil
      localID = try rows.writeRow(
        kind: kind, localID: localID, fields: joined.fields.mapValues(\.value), body: body)
      try rows.putState(kind: kind, uid: joined.id, localID: localID, state: joinedBytes)
      // Attachments that arrived before their owner are shown with it.
      if !wasShown {
        for uid in try rows.waiting(for: "\(kind)/\(joined.id)") {
          guard let waiting = try rows.state(kind: SyncRecord.Kind.attachment.rawValue, uid: uid) else { continue }
          try show(
            attachment: try SyncRecord.stored(waiting.state), changed: false, localID: waiting.localID,
            removing: &removed)
        }
      }
      return true
    }
    try rows.putState(kind: kind, uid: joined.id, localID: localID, state: joinedBytes)
    return true
  }

  /// Shows the joined state of an attachment: a row (its content still at
  /// the storage) when it is not deleted and its owner is shown, none
  /// otherwise, waiting for the owner when that is what it lacks. A row
  /// whose fields changed is made again (honest writers never change
  /// them; this keeps every device alike if one did).
  func show(attachment state: SyncRecord, changed: Bool, localID: Int64?, removing removed: inout [String]) throws {
    var localID = localID
    let kind = SyncRecord.Kind.attachment.rawValue
    guard case .string(let ownerText) = state.fields["owner"]?.value,
      let owner = SyncAttachmentContent.owner(ownerText),
      case .string(let name) = state.fields["name"]?.value,
      case .string(let mediaType) = state.fields["media_type"]?.value,
      case .integer(let createdAt) = state.fields["created_at"]?.value,
      let content = state.content
    else { throw SyncError.store(.damagedDatabase(path: "sync_records", reason: "an attachment state lacks a field")) }
    let ownerLocalID = try rows.state(kind: owner.kind.rawValue, uid: owner.id)?.localID
    if let id = localID, state.deleted != nil || ownerLocalID == nil || changed {
      removed += try rows.deleteAttachmentRow(localID: id)
      localID = nil
    }
    if state.deleted != nil {
      try rows.stopWaiting(attachment: state.id)
    } else if let ownerLocalID {
      try rows.stopWaiting(attachment: state.id)
      if localID == nil {
        let row = SyncAttachmentRow(
          owner: owner.kind == .task ? .task(ownerLocalID) : .page(ownerLocalID), name: name, mediaType: mediaType,
          byteCount: content.size, createdAt: createdAt, remote: true)
        localID = try rows.addRemoteAttachment(row)
      }
    } else {
      try rows.wait(attachment: state.id, for: ownerText)
    }
    try rows.putState(kind: kind, uid: state.id, localID: localID, state: state.storedBytes)
  }
}
