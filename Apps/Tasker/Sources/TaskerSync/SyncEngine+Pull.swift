import FoundationEssentials
import TaskCrypto
import TaskerCore

/// The reading half of a sync: every other device's new objects, read in
/// order and applied each whole or not at all.
extension SyncEngine {
  /// How many object bytes one applying transaction takes (at least one
  /// object): a new device's pull of 24 objects commits a few times
  /// instead of 24 (each commit wrote most of the randomly keyed
  /// `sync_records` pages to the log again). A batch is read whole before
  /// its transaction begins, so the database is never locked while the
  /// network is waited on; the next batch is read while it is applied
  /// (`SyncObjectStream`).
  static let batchBytes = 2 << 20

  /// What applying one object came to.
  enum Applied {
    /// Applied (or read past, when void): the records it changed here,
    /// whether it carried an epoch change, and whether it carried records
    /// (an acknowledgement is owed).
    case applied(changed: Int, void: Bool, epochChange: Bool, hadRecords: Bool)
    /// Refused, with the outcome's name: nothing of it was written.
    case refused(String)
  }

  /// Reads and applies every other device's new objects, in order.
  func pull(into report: inout Report, progress: ((SyncProgress) -> Void)? = nil) throws {
    // An object of an epoch this device does not have yet may follow the change that brings
    // its key in another device's log: after a pass that grew the keyring, read again.
    for _ in 0..<4 {
      let newest = keys.keyring.newest.epoch
      var pass = Report()
      try pullOnce(into: &pass, progress: progress)
      report.uploaded += pass.uploaded
      report.recordsChanged += pass.recordsChanged
      report.void += pass.void
      report.folded += pass.folded
      report.appliedWithRecords += pass.appliedWithRecords
      report.applied.merge(pass.applied, uniquingKeysWith: +)
      let grew = keys.keyring.newest.epoch > newest
      let waiting = pass.refused.contains { $0.reason == SyncOutcome.unknownEpoch.rawValue }
      guard grew && waiting else {
        report.refused += pass.refused
        return
      }
    }
  }

  /// One pass over the other devices' new objects, each device's in order.
  func pullOnce(into report: inout Report, progress: ((SyncProgress) -> Void)?) throws {
    let known = Dictionary(
      uniqueKeysWithValues: try store.withSyncTransaction { try $0.devices() }.map { ($0.device, $0) })
    for device in try target.devices() where device != configuration.device {
      var row = known[device] ?? SyncDeviceRow(device: device, name: nil, lastSeq: 0, lastMade: nil, lastSeen: nil)
      let present = Set(try target.sequence(of: device))
      var next = row.lastSeq + 1
      var refused = false
      var floor: UInt64?
      while !refused {
        if !present.contains(next) {
          // Missing: read past it only when the device's newest object says a fold holds it.
          guard let newest = present.max(), newest > next else { break }
          if floor == nil { floor = try floorAllowingGap(device: device, newest: newest) }
          guard let floor, floor >= next, let later = present.filter({ $0 > next }).min() else { break }
          let skipped = min(floor, later - 1)
          report.folded += Int(skipped - next + 1)
          row.lastSeq = skipped
          try store.withSyncTransaction { try $0.putDevice(row) }
          next = skipped + 1
          continue
        }
        // The run of objects there from `next` on, applied until one is refused or changes the epoch.
        let run = Array(sequence(first: next) { present.contains($0 + 1) ? $0 + 1 : nil })
        refused = try apply(run: run, device: device, row: &row, report: &report, progress: progress)
        next = row.lastSeq + 1
      }
      if !present.contains(next), let later = present.filter({ $0 > next }).min(),
        !report.refused.contains(where: { $0.device == device })
      {
        report.refused.append(.init(device: device, seq: next, reason: "missing (object \(later) is there)"))
      }
    }
  }

  /// Reads the objects `run` of `device` (consecutive, each there) and
  /// applies them in order, a batch per transaction, each object whole:
  /// until one is refused (it and those after it wait), or one carries an
  /// epoch change (committed at once; those after it are read again by
  /// the caller, to be opened with what the change brought).
  ///
  /// - Returns: whether an object was refused.
  /// - Throws: the storage's errors (the batch that met one is not
  ///   applied; those before it are), the store's.
  func apply(
    run: [UInt64], device: String, row: inout SyncDeviceRow, report: inout Report, progress: ((SyncProgress) -> Void)?
  ) throws -> Bool {
    let stream = SyncObjectStream(
      target: target, device: device, seqs: run, targetID: targetID, keyring: keys.keyring, batchBytes: Self.batchBytes)
    defer { stream.finish() }
    while let count = try stream.nextBatch() {
      var removed: [String] = []
      let ended = try store.withSyncApplyTransaction { rows -> (refused: Bool, epochChange: Bool) in
        for _ in 0..<count {
          let (seq, opened) = stream.take()
          progress?(.step("applying object \(seq) of device \(row.name ?? device)"))
          let applied = try apply(seq: seq, opened: opened, device: device, row: &row, rows: rows, removing: &removed)
          guard case .applied(let changed, let void, let epochChange, let hadRecords) = applied else {
            if case .refused(let reason) = applied {
              report.refused.append(.init(device: device, seq: seq, reason: reason))
            }
            return (true, false)
          }
          report.applied[device, default: 0] += 1
          report.recordsChanged += changed
          if void { report.void += 1 }
          if hadRecords { report.appliedWithRecords += 1 }
          if epochChange { return (false, true) }
        }
        return (false, false)
      }
      store.removeAttachmentFiles(removed)
      checkpoints.request()
      if ended.refused { return true }
      if ended.epochChange { return false }
    }
    return false
  }

  /// Applies one object whole inside the caller's transaction, or says
  /// why not (`opened` is the object opened and read, or the outcome that
  /// refuses it: `SyncObjectStream`); reads past a void one. A refused object writes nothing:
  /// everything that can refuse it (opening, the payload's rules, an
  /// epoch conflict, a body that does not open) is checked before the
  /// first write.
  func apply(
    seq: UInt64, opened: Result<SyncObjectStream.Opened, SyncOutcome>, device: String, row: inout SyncDeviceRow,
    rows: SyncRows, removing removed: inout [String]
  ) throws -> Applied {
    let payload: SyncPayload
    let epoch: UInt32
    let storedBytes: [[UInt8]]
    switch opened {
    case .success(let read): (payload, epoch, storedBytes) = (read.payload, read.epoch, read.storedBytes)
    case .failure(let outcome): return .refused(outcome.rawValue)
    }
    let epochs = SyncEpochState(rows: rows)
    let void = try epochs.isVoid(device: device, seq: seq, epoch: epoch)
    if payload.epochChange != nil, !void, let earlier = try epochs.applied(from: epoch),
      earlier.writer != device || earlier.seq != seq
    {
      return .refused(SyncOutcome.epochConflict.rawValue)
    }
    let capture = capturing(rows)
    let merge = SyncApply(rows: rows, capture: capture, writer: device, seq: seq)
    var bodies: [[String: String]] = []
    if !void {
      do {
        bodies = try payload.records.map { try merge.openHeads($0) }
      } catch SyncApply.Refusal.bodyUnreadable {
        return .refused(SyncOutcome.bodyUnreadable.rawValue)
      }
    }
    try capture.emitChanges()
    var count = 0
    if !void {
      for (index, (record, opened)) in zip(payload.records, bodies).enumerated() {
        if try merge.apply(record, opened: opened, encoded: storedBytes[index], removing: &removed) { count += 1 }
      }
      if let change = payload.epochChange { try enter(change, from: epoch, writer: device, seq: seq, rows: rows) }
      row.name = payload.deviceName ?? row.name
      row.lastMade = payload.made
      if let seen = payload.seen { try Self.keep(seen: seen, by: device, rows) }
    }
    row.lastSeq = seq
    row.lastSeen = Int64(Date().timeIntervalSince1970)
    try rows.putDevice(row)
    return .applied(
      changed: count, void: void, epochChange: !void && payload.epochChange != nil,
      hadRecords: !void && !payload.records.isEmpty)
  }
}
