import CommandKit
import FoundationEssentials
import TaskCrypto
import TaskerCore

/// Turns local changes into records and records into objects, inside the
/// caller's sync transaction: the writing half of the engine.
struct SyncCapture {
  let rows: SyncRows
  let configuration: SyncConfiguration
  let keyring: SyncKeyring
  /// This device's box public key, put in every object.
  let boxPublicKey: [UInt8]
  let targetID: [UInt8]

  /// Payloads are cut at about 1 MiB, far below the 4 MiB limit.
  static let payloadTarget = 1 << 20

  // MARK: - The clock

  /// The next clock of this device: after the wall clock, after every
  /// clock written or seen before.
  func tick() throws -> SyncClock {
    let wall = UInt64(max(0, Date().timeIntervalSince1970 * 1000)) << 16
    let time = max(wall, try rows.clock() + 1)
    rows.setClock(time)
    return SyncClock(time: time, device: configuration.device)
  }

  /// Moves the clock past `clock`, so this device's next change is later
  /// than everything it has seen.
  func observe(_ clock: SyncClock) throws {
    if clock.time > (try rows.clock()) { rows.setClock(clock.time) }
  }

  // MARK: - Local changes

  /// Seals the records changed locally since the last capture as this
  /// device's next objects, a batch of about 1 MiB at a time (never all
  /// of them in memory at once), their states updated and the changes
  /// forgotten; when every record is to be sent again (`resend`), the
  /// deleted ones too; with `alwaysOne`, one object even when nothing
  /// changed.
  ///
  /// - Returns: how many objects were made.
  /// - Throws: as `emit`; store and key errors.
  @discardableResult
  func emitChanges(alwaysOne: Bool = false) throws -> Int {
    var deletedBlobs: [(blob: String, writer: String?)] = []
    // Attachments whose deletion goes out again: a blob's note moves to the object that now carries it.
    var resentBlobs = Set<String>()
    var unnoted: [(blob: String, writer: String?)] = []
    let made = try emit(alwaysOne: alwaysOne) { add in
      // The records this capture deleted: a payload names each record once, and these are in the
      // deleted states below too, already sent. (A record captured with its row keeps its local id,
      // so it is never among them: the set grows with the deletions only, not with every change.)
      var sent = Set<String>()
      // After setup every record is sent once, changed or not: the target may be new.
      let resend = try rows.value("resend") == "1"
      try rows.forEachDirty { kindName, localID in
        guard let kind = SyncRecord.Kind(rawValue: kindName) else { return }
        let captured =
          kind == .attachment
          ? try captureAttachment(localID: localID, resend: resend, deletedBlobs: &deletedBlobs)
          : try capture(kind: kind, localID: localID, resend: resend)
        guard let record = captured else { return }
        if record.deleted { sent.insert("\(record.kind.rawValue)/\(record.id)") }
        try add(record)
      }
      // Capturing writes no task, page or attachment row: every row noted was read above.
      try rows.clearAllDirty()
      if resend {
        // A deleted record has no row to mark dirty: its kept state goes out as it is, or a deletion
        // sent in an object that an epoch change made void would never reach the other devices.
        try rows.forEachState(deletedOnly: true) { kept in
          guard !sent.contains("\(kept.kind)/\(kept.uid)") else { return }
          let state = try SyncRecord.stored(kept.state)
          if state.deleted != nil, let content = state.content { resentBlobs.insert(content.blob) }
          try add(EncodedRecord(state))
        }
        try rows.setValue("resend", "0")
      }
      unnoted = try unnotedDeletedBlobs(resend: resend, sent: &sent, add: add)
    }
    // The deletions went into the objects just sealed: the last of them carries each, or an earlier one.
    let last = (UInt64(try rows.value("next_seq") ?? "1") ?? 1) - 1
    for deleted in deletedBlobs {
      try rows.noteDeletedBlob(deleted.blob, carriedBy: configuration.device, seq: last, writer: deleted.writer)
    }
    // The position first noted may be void for the others (read past, nothing of it applied).
    try rows.moveDeletedBlobs(resentBlobs, carriedBy: configuration.device, seq: last)
    for deleted in unnoted {
      try rows.noteDeletedBlob(deleted.blob, carriedBy: configuration.device, seq: last, writer: deleted.writer)
    }
    return made
  }

  /// The named value that says the pass of `unnotedDeletedBlobs` ran.
  static let blobNotesPass = "blob-note-pass"

  /// Once per database and setup (until the named value `blobNotesPass`
  /// is kept): the blobs this device wrote whose attachments were deleted
  /// before blob removal existed, kept deleted but noted nowhere. Their
  /// states go out again in this capture's objects (with `resend` they
  /// already do), so the last of them carries each deletion and is the
  /// position noted: no earlier object of this device need carry it (one
  /// applied from another device was never written again here).
  private func unnotedDeletedBlobs(
    resend: Bool, sent: inout Set<String>, add: (EncodedRecord) throws -> Void
  ) throws -> [(blob: String, writer: String?)] {
    guard try rows.value(Self.blobNotesPass) == nil else { return [] }
    let noted = Set(try rows.deletedBlobs().map(\.blob))
    var unnoted: [(blob: String, writer: String?)] = []
    try rows.forEachState(deletedOnly: true) { kept in
      guard kept.kind == SyncRecord.Kind.attachment.rawValue else { return }
      let state = try SyncRecord.stored(kept.state)
      guard state.deleted != nil, let content = state.content, !noted.contains(content.blob),
        try wroteBlob(of: content)
      else { return }
      unnoted.append((content.blob, writer(of: content)))
      if !resend, sent.insert("\(kept.kind)/\(kept.uid)").inserted { try add(EncodedRecord(state)) }
    }
    try rows.setValue(Self.blobNotesPass, "1")
    return unnoted
  }

  /// Whether this database wrote `content`'s blob, so removes it once its
  /// attachment is deleted everywhere: under its current id, or under an
  /// id it had at this target before `sync off` (`SyncRows.formerDevices`).
  func wroteBlob(of content: SyncAttachmentContent) throws -> Bool {
    try content.device == configuration.device
      || rows.formerDevices(targetID: configuration.targetID).contains(content.device)
  }

  /// The writer a blob's note names: nil for the current id.
  func writer(of content: SyncAttachmentContent) -> String? {
    content.device == configuration.device ? nil : content.device
  }

  /// The record of one changed row, its new state kept, encoded once for
  /// both the store and the object; nil when nothing is to be sent.
  private func capture(kind: SyncRecord.Kind, localID: Int64, resend: Bool) throws -> EncodedRecord? {
    let kept = try rows.state(kind: kind.rawValue, localID: localID)
    var state = try kept.map { try SyncRecord.stored($0.state) } ?? SyncRecord(kind: kind, id: SyncHex.randomID())
    let before = state
    guard let row = try rows.localRow(kind: kind.rawValue, localID: localID) else {
      guard kept != nil, state.deleted == nil else { return nil }
      state.deleted = try tick()
      state.superseded.formUnion(state.heads.keys)
      state.heads = [:]
      let encoded = EncodedRecord(state)
      try rows.putState(kind: kind.rawValue, uid: state.id, localID: nil, state: encoded.bytes)
      return encoded
    }
    for (name, value) in row.fields.sorted(by: { $0.key < $1.key }) where state.fields[name]?.value != value {
      state.fields[name] = SyncRecord.Field(value: value, clock: try tick())
    }
    let shown = state.shownVersion
    let shownText = try shown.map {
      try rows.openFromSync(state.heads[$0]!.text, context: state.bodyContext(version: $0))
    }
    if row.body != (shownText ?? "") {
      let version = SyncHex.randomID()
      let text = try rows.sealForSync(row.body, context: state.bodyContext(version: version))
      state.heads[version] = SyncRecord.Head(clock: try tick(), text: text)
      if let shown {
        state.superseded.insert(shown)
        state.heads[shown] = nil
      }
    }
    guard state != before || kept == nil || resend else { return nil }
    let encoded = EncodedRecord(state)
    try rows.putState(kind: kind.rawValue, uid: state.id, localID: localID, state: encoded.bytes)
    return encoded
  }

  /// An attachment's record: a new local attachment gets its identity,
  /// its fields (all at one clock) and a blob to upload; one removed here
  /// is deleted (its blob, when this device wrote it, goes to
  /// `deletedBlobs`); a known one never changes (it is sent again only
  /// with `resend`).
  private func captureAttachment(
    localID: Int64, resend: Bool, deletedBlobs: inout [(blob: String, writer: String?)]
  ) throws
    -> EncodedRecord?
  {
    let kept = try rows.state(kind: SyncRecord.Kind.attachment.rawValue, localID: localID)
    guard let row = try rows.attachmentRow(localID: localID) else {
      guard let kept else { return nil }
      var state = try SyncRecord.stored(kept.state)
      guard state.deleted == nil else { return nil }
      if let content = state.content, try wroteBlob(of: content) {
        deletedBlobs.append((content.blob, writer(of: content)))
      }
      state.deleted = try tick()
      let encoded = EncodedRecord(state)
      try rows.putState(kind: state.kind.rawValue, uid: state.id, localID: nil, state: encoded.bytes)
      return encoded
    }
    if let kept { return resend ? EncodedRecord(try SyncRecord.stored(kept.state)) : nil }
    // A new one whose content is not here (never fetched, as a row an undo brought back, or a file that
    // does not open) could never be sent: refused, and the whole capture with it.
    _ = try SyncError.sendingContent(of: localID) { try rows.attachmentContent(localID: localID) }
    let (ownerKind, ownerLocalID) =
      switch row.owner {
      case .task(let id): (SyncRecord.Kind.task, id)
      case .page(let id): (SyncRecord.Kind.page, id)
      }
    // The owner is captured first (attachments come last), so it has its identity.
    guard let owner = try rows.state(kind: ownerKind.rawValue, localID: ownerLocalID) else { return nil }
    var state = SyncRecord(kind: .attachment, id: SyncHex.randomID())
    let content = SyncAttachmentContent(device: configuration.device, blob: SyncHex.randomID(), size: row.byteCount)
    let clock = try tick()
    let values: [String: JSONValue] = [
      "owner": .string("\(ownerKind.rawValue)/\(owner.uid)"), "name": .string(row.name),
      "media_type": .string(row.mediaType), "created_at": .integer(row.createdAt), "content": content.value,
    ]
    state.fields = values.mapValues { SyncRecord.Field(value: $0, clock: clock) }
    let encoded = EncodedRecord(state)
    try rows.putState(kind: state.kind.rawValue, uid: state.id, localID: localID, state: encoded.bytes)
    try rows.addBlob(content.blob, localID: localID, uid: state.id)
    return encoded
  }

  // MARK: - Objects

  /// A record in the record form's bytes (`SyncRecord.storedBytes`),
  /// encoded once: the same bytes are kept as its state and carried in
  /// its object.
  struct EncodedRecord {
    /// The record's kind and id, to name it in an error.
    let kind: SyncRecord.Kind
    let id: String
    /// `SyncPayload.value(of:).encoded` of the record.
    let bytes: [UInt8]
    /// Whether the record says it is deleted.
    let deleted: Bool

    init(_ record: SyncRecord) {
      kind = record.kind
      id = record.id
      bytes = record.storedBytes
      deleted = record.deleted != nil
    }
  }

  /// Records gathered into payloads of about 1 MiB and at most
  /// `SyncPayload.maximumRecords` records each.
  struct Batches {
    /// The batch being filled.
    private(set) var current: [EncodedRecord] = []
    private var size = 0

    /// Adds `record`; returns the batch it did not fit in, to seal first.
    mutating func add(_ record: EncodedRecord) -> [EncodedRecord]? {
      let count = record.bytes.count
      var full: [EncodedRecord]?
      if !current.isEmpty, size + count > SyncCapture.payloadTarget || current.count == SyncPayload.maximumRecords {
        full = current
        (current, size) = ([], 0)
      }
      current.append(record)
      size += count
      return full
    }
  }

  /// Seals `records` as this device's next objects under the keyring's
  /// newest epoch (a payload of about 1 MiB each) and keeps them in the
  /// outbox; with `alwaysOne`, one object even for no record.
  ///
  /// - Returns: how many objects were made.
  /// - Throws: `SyncError.recordTooLarge`; store and crypto errors.
  @discardableResult
  func emit(_ records: [SyncRecord], alwaysOne: Bool = false) throws -> Int {
    try emit(alwaysOne: alwaysOne) { add in
      for record in records { try add(EncodedRecord(record)) }
    }
  }

  /// Seals every kept state again as this device's next objects (a fold),
  /// at least one object: each state checked to be a record, read a page
  /// at a time, so a fold's memory does not grow with the records.
  ///
  /// - Returns: how many objects were made.
  /// - Throws: `SyncError.store` for a kept state that is not a record;
  ///   as `emit`.
  func emitEveryState() throws -> Int {
    try emit(alwaysOne: true) { add in
      try rows.forEachState { kept in try add(EncodedRecord(try SyncRecord.stored(kept.state))) }
    }
  }

  /// Seals the records `produce` adds in payloads of about 1 MiB, each
  /// batch as soon as it is full; with `alwaysOne`, one object even for
  /// no record.
  private func emit(alwaysOne: Bool, _ produce: (_ add: (EncodedRecord) throws -> Void) throws -> Void) throws -> Int {
    var batches = Batches()
    var made = 0
    try produce { record in
      if let full = batches.add(record) {
        try sealObject(full)
        made += 1
      }
    }
    if !batches.current.isEmpty || (alwaysOne && made == 0) {
      try sealObject(batches.current)
      made += 1
    }
    return made
  }

  /// Seals `records` as this device's next object and keeps it in the
  /// outbox: under the keyring's newest epoch, or with `epochChange`
  /// carrying it, at the change's old epoch.
  ///
  /// - Throws: `SyncError.recordTooLarge`; store and crypto errors.
  func sealObject(_ records: [EncodedRecord], epochChange: SyncEpochChange? = nil) throws {
    let key = epochChange.flatMap { keyring.key(epoch: $0.number - 1) } ?? keyring.newest
    let seq = UInt64(try rows.value("next_seq") ?? "1") ?? 1
    var seen: [String: UInt64] = [:]
    for device in try rows.devices() where device.device != configuration.device {
      seen[device.device] = device.lastSeq
    }
    let payload = SyncPayload.encoded(
      made: Int64(Date().timeIntervalSince1970), deviceName: configuration.name, deviceBox: boxPublicKey,
      epochChange: epochChange, seen: seen, floor: UInt64(try rows.value("floor") ?? "0") ?? 0,
      records: records.map(\.bytes))
    let object: [UInt8]
    do {
      object = try SyncObjectFormat.seal(
        payload, at: .init(device: Hex.decode(configuration.device)!, seq: seq), targetID: targetID, key: key)
    } catch SyncOutcome.tooLarge {
      throw records.first.map { SyncError.recordTooLarge(kind: $0.kind.rawValue, id: $0.id) }
        ?? SyncError.invalidArgument(reason: "an epoch change does not fit in one object")
    }
    try rows.addToOutbox(seq: seq, object: object)
    // An object with an epoch change stays at the storage for good (compaction never removes it).
    if epochChange != nil { try rows.setValue("kept", ((try rows.value("kept")) ?? "") + " \(seq)") }
    try rows.setValue("next_seq", String(seq + 1))
    try rows.setValue(SyncEpochState.wroteName(key.epoch), String(seq))
  }
}

extension SyncRecord {
  /// A state as the store keeps it (the record form).
  ///
  /// - Throws: `SyncError.store` when the kept state is not a record.
  static func stored(_ bytes: [UInt8]) throws -> SyncRecord {
    guard let document = try? JSONDocument(parsing: bytes), let record = try? SyncPayload.record(document.value) else {
      throw SyncError.store(.damagedDatabase(path: "sync_records", reason: "a kept sync state is not a record"))
    }
    return record
  }

  /// The record form's bytes.
  var storedBytes: [UInt8] { SyncPayload.encoded(record: self) }
}
