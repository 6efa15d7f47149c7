import CommandKit
import TaskerCore

/// Texts written on two devices without either seeing the other's
/// (docs/formats/sync-storage.md, *Applying*, rule 4), and choosing one.
public struct SyncConflict: Sendable, Equatable {
  /// The record's kind.
  public var kind: SyncRecord.Kind
  /// The record's identity.
  public var id: String
  /// Its local row, nil when the record was deleted.
  public var localID: Int64?
  /// Its title (the synced field), if known.
  public var title: String?
  /// The texts: the shown one first (none for a deleted record), then the
  /// others by clock, newest first.
  public var texts: [(version: String, clock: SyncClock, text: String)]

  /// Compares kind, ids and texts.
  public static func == (lhs: SyncConflict, rhs: SyncConflict) -> Bool {
    lhs.kind == rhs.kind && lhs.id == rhs.id && lhs.localID == rhs.localID && lhs.title == rhs.title
      && lhs.texts.map(\.version) == rhs.texts.map(\.version) && lhs.texts.map(\.text) == rhs.texts.map(\.text)
  }
}

extension SyncEngine {
  /// Every record with a conflict, its texts opened.
  ///
  /// - Throws: the key source's errors, `SyncError.store`.
  public static func conflicts(in store: TaskStore) throws -> [SyncConflict] {
    try SyncError.storing {
      try store.withSyncTransaction { rows in
        // Read a page at a time: only the conflicts are kept, not every record.
        var found: [SyncConflict] = []
        try rows.forEachState { kept in
          let record = try SyncRecord.stored(kept.state)
          let others = record.conflictVersions
          guard !others.isEmpty else { return }
          let order =
            (record.shownVersion.map { [$0] } ?? [])
            + others.sorted { (record.heads[$0]!.clock, $0) > (record.heads[$1]!.clock, $1) }
          let texts = try order.map { version in
            (
              version, record.heads[version]!.clock,
              try rows.openFromSync(record.heads[version]!.text, context: record.bodyContext(version: version))
            )
          }
          var title: String?
          if case .string(let text) = record.fields["title"]?.value { title = text }
          found.append(
            SyncConflict(kind: record.kind, id: record.id, localID: kept.localID, title: title, texts: texts))
        }
        return found
      }
    }
  }

  /// Resolves the conflict on the local row `localID` of `kind` (or, for
  /// a deleted record, on the record `id`): text number `keep` (1-based,
  /// in the order `conflicts(in:)` gives) becomes the body, every other
  /// head is superseded, and the result is sealed into the outbox for the
  /// next sync. A deleted record's text comes back as a new record.
  ///
  /// - Returns: the local id of the record that holds the kept text.
  /// - Throws: `SyncError.noConflict`, store and key errors.
  public func resolve(kind: SyncRecord.Kind, localID: Int64?, id: String?, keep: Int) throws -> Int64 {
    let name = localID.map { "\(kind.rawValue) \($0)" } ?? "\(kind.rawValue) \(id ?? "?")"
    return try SyncError.storing {
      try store.withSyncTransaction { rows -> Int64 in
        let capture = capturing(rows)
        try capture.emitChanges()
        let kept =
          try localID.flatMap { try rows.state(kind: kind.rawValue, localID: $0) }.map { ($0.uid, $0.state) }
          ?? id.flatMap { uid in try rows.state(kind: kind.rawValue, uid: uid).map { (uid, $0.state) } }
        guard let (uid, bytes) = kept,
          let conflict = try Self.conflicts(in: store).first(where: { $0.kind == kind && $0.id == uid }),
          (1...conflict.texts.count).contains(keep)
        else { throw SyncError.noConflict(record: name) }
        var record = try SyncRecord.stored(bytes)
        let text = conflict.texts[keep - 1].text
        record.superseded.formUnion(record.heads.keys)
        record.heads = [:]
        var emitted = [record]
        var target = record
        if record.deleted != nil {
          target = SyncRecord(kind: kind, id: SyncHex.randomID())
          for (field, value) in record.fields {
            target.fields[field] = .init(value: value.value, clock: try capture.tick())
          }
        }
        let version = SyncHex.randomID()
        target.heads[version] = .init(
          clock: try capture.tick(), text: try rows.sealForSync(text, context: target.bodyContext(version: version)))
        let row = try rows.writeRow(
          kind: kind.rawValue, localID: record.deleted == nil ? conflict.localID : nil,
          fields: target.fields.mapValues(\.value), body: text)
        if record.deleted != nil {
          try rows.putState(kind: kind.rawValue, uid: record.id, localID: nil, state: record.storedBytes)
          emitted.append(target)
        } else {
          emitted = [target]
        }
        try rows.putState(kind: kind.rawValue, uid: target.id, localID: row, state: target.storedBytes)
        try capture.emit(emitted)
        return row
      }
    }
  }
}
