import TaskerCore

/// Applies one record read from another device: the join with the kept
/// state, then the shown values written to the local row (the merge of
/// docs/formats/sync-storage.md, *Applying*).
struct SyncApply {
  let rows: SyncRows
  let capture: SyncCapture

  /// Why a record was not applied.
  enum Refusal: Error {
    /// A body text did not open under the note keys with its context.
    case bodyUnreadable
  }

  /// Joins `record` into the kept state and shows the result.
  ///
  /// - Returns: whether anything changed.
  /// - Throws: `Refusal.bodyUnreadable` (the caller rolls the object
  ///   back), the store's errors.
  func apply(_ record: SyncRecord, removing removed: inout [String]) throws -> Bool {
    for (version, head) in record.heads {
      do {
        _ = try rows.openFromSync(head.text, context: record.bodyContext(version: version))
      } catch TaskerError.sealedBodyUnreadable {
        throw Refusal.bodyUnreadable
      }
    }
    for clock in record.fields.values.map(\.clock) + record.heads.values.map(\.clock)
      + [record.deleted].compactMap({ $0 })
    {
      try capture.observe(clock)
    }
    let kind = record.kind.rawValue
    let kept = try rows.state(kind: kind, uid: record.id)
    let before = try kept.map { try SyncRecord.stored($0.state) } ?? SyncRecord(kind: record.kind, id: record.id)
    let joined = before.joined(with: record)
    guard joined != before else { return false }
    var localID = kept?.localID
    if joined.deleted != nil {
      if let id = localID { removed += try rows.deleteRow(kind: kind, localID: id) }
      localID = nil
    } else {
      let shown = joined.shownVersion
      var body: String?
      if shown != before.shownVersion || localID == nil {
        body =
          try shown.map { try rows.openFromSync(joined.heads[$0]!.text, context: joined.bodyContext(version: $0)) }
          ?? ""
      }
      localID = try rows.writeRow(
        kind: kind, localID: localID, fields: joined.fields.mapValues(\.value), body: body)
    }
    try rows.putState(kind: kind, uid: joined.id, localID: localID, state: joined.storedBytes)
    return true
  }
}
