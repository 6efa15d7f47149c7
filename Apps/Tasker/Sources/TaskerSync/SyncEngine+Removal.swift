import FoundationEssentials
import TaskCrypto
import TaskSystem
import TaskerCore

extension SyncEngine {
  /// Removes `devices` from the target: a sync first, then a new keyring
  /// entry (saved to the vault before anything is written), sealed to
  /// every other remaining device's box key as found in its latest object
  /// at the storage, and an epoch change in this device's next object
  /// (docs/formats/sync-storage.md, *Removing a device*). A removal
  /// interrupted is finished by running it again with the same devices.
  ///
  /// - Returns: the sync's report, the change's object counted as sent.
  /// - Throws: `SyncError.invalidArgument` for this device, an unknown or
  ///   already removed device; `.removalInterrupted` for other devices
  ///   than the interrupted removal's; `.deviceKeyUnknown` for a remaining
  ///   device whose box key the storage does not hold; `.outsideEpoch`
  ///   when this device has not entered the newest epoch; as `run`.
  public func removeDevices(_ devices: Set<String>, progress: ((SyncProgress) -> Void)? = nil) throws -> Report {
    let lock = PosixFileSystem.directory(of: store.databasePath) + "/tasker.sync.lock"
    return try SyncError.storing {
      try FileLock.withExclusive(lock) {
        let pending = try store.withSyncTransaction { try SyncEpochState(rows: $0).pendingRemoval() }
        if let pending, pending.devices != devices {
          throw SyncError.removalInterrupted(devices: pending.devices.sorted())
        }
        var report = try exchange(progress: progress)
        let from = pending?.from ?? keys.keyring.newest.epoch
        let boxes = try remainingBoxes(removing: devices)
        try store.withSyncTransaction { try SyncEpochState(rows: $0).setPendingRemoval((from, devices)) }
        if keys.keyring.key(epoch: from + 1) == nil { try keys.add(try SyncKey.generateEntry(epoch: from + 1)) }
        guard let entry = try keys.keyring.entryValue(epoch: from + 1) else {
          throw SyncError.outsideEpoch(epoch: from + 1)
        }
        let sealed = try boxes.mapValues { try AnonymousBox.seal(entry, to: $0) }
        try store.withSyncTransaction { rows in
          // Local changes since the exchange wait for the next sync: sealed now they would come
          // before the change at the new epoch, which no other device could open yet.
          let capture = capturing(rows)
          let seq = UInt64(try rows.value("next_seq") ?? "1") ?? 1
          var cuts = Dictionary(uniqueKeysWithValues: try rows.devices().map { ($0.device, $0.lastSeq) })
          cuts[configuration.device] = seq
          let change = SyncEpochChange(number: from + 1, removed: devices, cuts: cuts, keys: sealed)
          try capture.sealObject([], epochChange: change)
          let epochs = SyncEpochState(rows: rows)
          try epochs.record(
            .init(writer: configuration.device, seq: seq, cuts: cuts, removed: devices), from: from)
          try epochs.setPendingRemoval(nil)
        }
        report.uploaded += try upload(progress: progress)
        return report
      }
    }
  }

  /// The box key of every device that stays, read from its latest applied
  /// object that carries one (never from the database).
  ///
  /// - Throws: `SyncError.invalidArgument`, `.deviceKeyUnknown`,
  ///   `.outsideEpoch`; storage errors.
  func remainingBoxes(removing devices: Set<String>) throws -> [String: [UInt8]] {
    let (known, removedBefore, outside) = try store.withSyncTransaction { rows in
      let epochs = SyncEpochState(rows: rows)
      return (
        try rows.devices(), try epochs.removedDevices(below: keys.keyring.newest.epoch + 1),
        try epochs.applied(from: keys.keyring.newest.epoch) != nil
      )
    }
    guard !outside else { throw SyncError.outsideEpoch(epoch: keys.keyring.newest.epoch + 1) }
    let knownIDs = Set(known.map(\.device))
    for device in devices.sorted() {
      guard device != configuration.device else {
        throw SyncError.invalidArgument(reason: "this device cannot remove itself: run 'tasker sync off' here")
      }
      guard knownIDs.contains(device), !removedBefore.contains(device) else {
        throw SyncError.invalidArgument(
          reason: "no device \(device) to remove ('tasker sync devices' lists them by id)")
      }
    }
    var boxes: [String: [UInt8]] = [:]
    for row in known where !devices.contains(row.device) && !removedBefore.contains(row.device) {
      boxes[row.device] = try latestBox(of: row)
    }
    return boxes
  }

  /// The `device.box` of `row`'s latest applied object that has one
  /// (never a void object's: a removed device may have forged it).
  func latestBox(of row: SyncDeviceRow) throws -> [UInt8] {
    var seq = row.lastSeq
    while seq > 0 {
      let position = SyncObjectFormat.Position(device: Hex.decode(row.device)!, seq: seq)
      if let bytes = try target.read(device: row.device, seq: seq, limit: SyncObjectFormat.maximumObjectByteCount),
        let opened = try? SyncObjectFormat.open(bytes, at: position, targetID: targetID, keyring: keys.keyring),
        let payload = try? SyncPayload(reading: opened.payload, at: position, epoch: opened.epoch),
        let box = payload.deviceBox,
        try !store.withSyncTransaction({
          try SyncEpochState(rows: $0).isVoid(device: row.device, seq: seq, epoch: opened.epoch)
        })
      {
        return box
      }
      seq -= 1
    }
    throw SyncError.deviceKeyUnknown(device: row.device, name: row.name)
  }
}
