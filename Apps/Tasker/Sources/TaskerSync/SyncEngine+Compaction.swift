import TaskCrypto
import TaskerCore

/// Compaction (docs/formats/sync-storage.md, *Compaction*): every object
/// says what its writer has applied (`seen`); a device folds its log into
/// the states it keeps, then removes its own objects below the fold that
/// every device it knows has acknowledged, and its own blobs whose
/// attachments' deletions they have all acknowledged; a reader reads past
/// a fold.
extension SyncEngine {
  /// A device folds its log once it has written more objects than this
  /// since its last floor.
  public static let foldThreshold: UInt64 = 512

  /// What one compaction did.
  public struct Compaction: Sendable, Equatable {
    /// Objects written by the fold (0 when none was due or asked for).
    public var folded = 0
    /// This device's objects removed from the storage.
    public var removed = 0
    /// This device's blobs of deleted attachments removed from the
    /// storage (one found gone already counts).
    public var blobsRemoved = 0
    /// The floor after it (0: never folded).
    public var floor: UInt64 = 0
  }

  /// Folds when asked (`force`) or when the log has grown past the
  /// threshold, uploads the fold, then removes what is safe to remove:
  /// objects, then blobs. Runs inside `run`'s lock, after an exchange.
  ///
  /// - Throws: the store's and the storage's errors.
  func compact(force: Bool, progress: ((SyncProgress) -> Void)?) throws -> Compaction {
    var result = Compaction()
    let (floor, last) = try store.withSyncTransaction { rows in
      (try Self.floor(rows), UInt64(try rows.value("next_seq") ?? "1").map { $0 - 1 } ?? 0)
    }
    if last > floor && (force || last - floor > Self.foldThreshold) {
      result.folded = try fold()
      _ = try upload(progress: progress)
    }
    result.removed = try prune()
    result.blobsRemoved = try removeDeletedBlobs()
    result.floor = try store.withSyncTransaction { try Self.floor($0) }
    return result
  }

  /// Writes every kept state again as this device's next objects, all of
  /// them (and every later object) with the floor just below them.
  ///
  /// - Returns: how many objects the fold took.
  func fold() throws -> Int {
    try store.withSyncTransaction { rows in
      let capture = capturing(rows)
      try capture.emitChanges()
      let next = UInt64(try rows.value("next_seq") ?? "1") ?? 1
      guard next > 1 else { return 0 }
      try rows.setValue("floor", String(next - 1))
      return try capture.emitEveryState()
    }
  }

  /// Removes this device's objects at or below its floor that carry no
  /// epoch change and that every device it knows, and has not removed,
  /// has acknowledged. Never before the fold has left the outbox.
  ///
  /// - Returns: how many were removed.
  func prune() throws -> Int {
    let me = configuration.device
    let (bound, kept) = try store.withSyncTransaction { rows -> (UInt64, Set<UInt64>) in
      guard try rows.outboxSeqs().isEmpty else { return (0, []) }
      let bound = try acknowledgements(rows).values.reduce(try Self.floor(rows)) { min($0, $1[me] ?? 0) }
      return (bound, try Self.keptSeqs(rows))
    }
    guard bound > 0 else { return 0 }
    var count = 0
    for seq in try target.sequence(of: me) where seq <= bound && !kept.contains(seq) {
      try target.remove(device: me, seq: seq)
      count += 1
    }
    return count
  }

  /// Removes this device's blobs whose attachments are deleted, once
  /// every device it knows, and has not removed, has the deletion: the
  /// object noted as carrying it is at most what that device's latest
  /// object says it has seen of the writer (the writer has it). Never
  /// while the outbox holds objects. A removal that fails is tried again
  /// at the next sync and does not fail this one.
  ///
  /// - Returns: how many were removed (or found gone).
  /// - Throws: the store's errors.
  func removeDeletedBlobs() throws -> Int {
    let me = configuration.device
    let due = try store.withSyncTransaction { rows -> [SyncRows.DeletedBlob] in
      guard try rows.outboxSeqs().isEmpty else { return [] }
      let deleted = try rows.deletedBlobs()
      guard !deleted.isEmpty else { return [] }
      let seen = try acknowledgements(rows)
      // A blob under another id is removed only when that id is one this database had here: the
      // note alone, a row of the database, never makes it remove another device's blob.
      let former = try rows.formerDevices(targetID: configuration.targetID)
      return deleted.filter { blob in
        (blob.writer.map(former.contains) ?? true)
          && seen.allSatisfy { $0.key == blob.device || ($0.value[blob.device] ?? 0) >= blob.seq }
      }
    }
    var count = 0
    for blob in due {
      do {
        // Written under an id this database had before `sync off` and set up again on this target.
        try target.removeBlob(device: blob.writer ?? me, blob: blob.blob)
      } catch is SyncError {
        continue
      }
      try store.withSyncTransaction { try $0.forgetDeletedBlob(blob.blob) }
      count += 1
    }
    return count
  }

  // MARK: - Reading past a fold

  /// The floor of `device`'s newest object at the storage, when it lets a
  /// reader at `next` skip what is missing: read and opened by the rules,
  /// not void. Zero when there is none.
  func floorAllowingGap(device: String, newest: UInt64) throws -> UInt64 {
    let position = SyncObjectFormat.Position(device: Hex.decode(device)!, seq: newest)
    guard
      let bytes = try target.read(device: device, seq: newest, limit: SyncObjectFormat.maximumObjectByteCount),
      let opened = try? SyncObjectFormat.open(bytes, at: position, targetID: targetID, keyring: keys.keyring),
      let payload = try? SyncPayload(reading: opened.payload, at: position, epoch: opened.epoch)
    else { return 0 }
    let void = try store.withSyncTransaction {
      try SyncEpochState(rows: $0).isVoid(device: device, seq: newest, epoch: opened.epoch)
    }
    return void ? 0 : payload.floor
  }

  /// What every device this one knows, and has not removed, has
  /// acknowledged (its latest applied object's `seen`), by device.
  func acknowledgements(_ rows: SyncRows) throws -> [String: [String: UInt64]] {
    let removed = try SyncEpochState(rows: rows).removedDevices(below: keys.keyring.newest.epoch + 1)
    var seen: [String: [String: UInt64]] = [:]
    for device in try rows.devices() where device.device != configuration.device && !removed.contains(device.device) {
      seen[device.device] = try Self.seen(by: device.device, rows)
    }
    return seen
  }

  // MARK: - Named values

  /// This device's floor (0: never folded).
  static func floor(_ rows: SyncRows) throws -> UInt64 { UInt64(try rows.value("floor") ?? "0") ?? 0 }

  /// What `device`'s latest applied object said it had seen.
  static func seen(by device: String, _ rows: SyncRows) throws -> [String: UInt64] {
    var seen: [String: UInt64] = [:]
    for entry in (try rows.value("seen:" + device) ?? "").split(separator: " ") {
      let parts = entry.split(separator: ":")
      if parts.count == 2, let seq = UInt64(parts[1]) { seen[String(parts[0])] = seq }
    }
    return seen
  }

  /// Keeps what `device`'s latest applied object said it had seen.
  static func keep(seen: [String: UInt64], by device: String, _ rows: SyncRows) throws {
    try rows.setValue(
      "seen:" + device, seen.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: " "))
  }

  /// This device's objects that carry an epoch change (never removed).
  static func keptSeqs(_ rows: SyncRows) throws -> Set<UInt64> {
    Set((try rows.value("kept") ?? "").split(separator: " ").compactMap { UInt64($0) })
  }
}
