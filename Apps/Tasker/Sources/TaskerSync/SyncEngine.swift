import FoundationEssentials
import TaskCrypto
import TaskSystem
import TaskerCore

/// One sync of one database with its target: check the marker, seal and
/// upload local changes, then read every other device's new objects in
/// order and apply each whole or not at all (docs/formats/sync-storage.md).
public struct SyncEngine {
  let store: TaskStore
  let configuration: SyncConfiguration
  let keys: SyncKeys
  let target: any SyncTarget
  let targetID: [UInt8]
  /// The log's checkpoints during `run`, beside the uploads and applying
  /// that follow each large commit.
  let checkpoints: BackgroundCheckpoints

  /// An engine for `store` as `configuration` sets it up, with `keys`.
  ///
  /// - Throws: `SyncError.recordRefused` for a target id that is not hex.
  public init(store: TaskStore, configuration: SyncConfiguration, keys: SyncKeys, target: any SyncTarget) throws {
    guard let targetID = Hex.decode(configuration.targetID), targetID.count == 16 else {
      throw SyncError.recordRefused(item: "configuration", outcome: .malformed)
    }
    self.store = store
    self.configuration = configuration
    self.keys = keys
    self.target = target
    self.targetID = targetID
    self.checkpoints = BackgroundCheckpoints(databasePath: store.databasePath)
  }

  /// What one sync did.
  public struct Report: Sendable, Equatable {
    /// Objects this device uploaded.
    public var uploaded = 0
    /// Objects applied, per device id.
    public var applied: [String: Int] = [:]
    /// Records whose shown state changed here.
    public var recordsChanged = 0
    /// Objects refused, with why: nothing of them was applied and their
    /// device's later objects wait.
    public var refused: [Refusal] = []
    /// Objects void after an epoch change (sealed at an old epoch after
    /// their device's cut): read past, nothing of them applied.
    public var void = 0
    /// Objects of other devices read past because a fold holds them.
    public var folded = 0
    /// What compaction did after the exchange.
    public var compaction = Compaction()
    /// Objects applied that carried records (an acknowledgement is owed).
    var appliedWithRecords = 0

    /// An object that was refused, or a gap before one.
    public struct Refusal: Sendable, Equatable {
      /// The device whose object it is.
      public var device: String
      /// Its position.
      public var seq: UInt64
      /// The outcome name, or `missing` for a gap.
      public var reason: String
    }
  }

  /// Runs one sync, holding the home's sync lock (a second sync waits);
  /// `progress` hears a line per object sent or applied (for a terminal).
  ///
  /// - Throws: `SyncError` for the marker, the storage or this device's
  ///   position; store and key errors. An object refused is not thrown:
  ///   it is in the report.
  public func run(progress: ((SyncProgress) -> Void)? = nil, compacting force: Bool = false) throws -> Report {
    let lock = PosixFileSystem.directory(of: store.databasePath) + "/tasker.sync.lock"
    return try SyncError.storing {
      try FileLock.withExclusive(lock) {
        SyncFiles.clearStaging(forDatabase: store.databasePath)
        try store.prepareForSync()
        // A commit no longer copies the log into the database itself: a worker does, beside what follows.
        try store.leaveCheckpointsToCaller()
        checkpoints.start()
        defer { checkpoints.finish() }
        if let pending = try store.withSyncTransaction({ try SyncEpochState(rows: $0).pendingRemoval() }) {
          throw SyncError.removalInterrupted(devices: pending.devices.sorted())
        }
        var report = try exchange(progress: progress)
        report.compaction = try compact(force: force, progress: progress)
        let newest = keys.keyring.newest.epoch
        if try store.withSyncTransaction({ try SyncEpochState(rows: $0).applied(from: newest) }) != nil {
          throw SyncError.outsideEpoch(epoch: newest + 1)
        }
        checkpoints.finish()
        try store.checkpointLog()
        return report
      }
    }
  }

  /// One sync's exchange, the lock held: the marker checked, this device's
  /// stale temporaries removed, local changes sent, other devices' objects applied, what that changed sent.
  func exchange(progress: ((SyncProgress) -> Void)?) throws -> Report {
    try checkMarker()
    // A temporary of this device's is from a write that was killed: no write of it runs now (the lock).
    try target.removeTemporaries(of: configuration.device)
    var report = Report()
    try capture()
    report.uploaded += try upload(progress: progress)
    try pull(into: &report, progress: progress)
    // What applying changed here (an epoch change can ask for every record again) goes out now.
    try capture()
    // Objects with records were applied and nothing is going out: an acknowledgement does.
    try store.withSyncTransaction { rows in
      if report.appliedWithRecords > 0, report.uploaded == 0, try rows.outboxSeqs().isEmpty {
        try capturing(rows).sealObject([])
      }
    }
    report.uploaded += try upload(progress: progress)
    return report
  }

  /// Checks that the storage's marker is the one set up.
  ///
  /// - Throws: `SyncError.markerRefused`, `.targetChanged`, `.storage`.
  func checkMarker() throws {
    let path = target.location + "/target"
    guard let marker = try target.readMarker() else {
      throw SyncError.markerRefused(path: path, outcome: .malformedMarker)
    }
    let found: [UInt8]
    do {
      found = try SyncObjectFormat.openMarker(marker, keyring: keys.keyring)
    } catch {
      throw SyncError.markerRefused(path: path, outcome: error)
    }
    guard found == targetID else { throw SyncError.targetChanged(path: path) }
  }

  func capturing(_ rows: SyncRows) -> SyncCapture {
    SyncCapture(
      rows: rows, configuration: configuration, keyring: keys.keyring, boxPublicKey: keys.boxPublicKey,
      targetID: targetID)
  }

  /// Seals the local changes into the outbox; the first sync after setup
  /// writes an object even without changes, so the others learn this
  /// device's box key.
  func capture() throws {
    try store.withSyncTransaction { rows in
      try SyncEpochState(rows: rows).resendVoidedWork(device: configuration.device, newest: keys.keyring.newest.epoch)
      let capture = capturing(rows)
      // Right after setup (everything is sent once) an object is written even when there is nothing to send.
      let first = try rows.value("resend") == "1"
      try capture.emitChanges(alwaysOne: first)
    }
    checkpoints.request()
  }

  /// Uploads the pending blobs, then the outbox in seq order; the objects
  /// the storage holds exactly leave the outbox together, in one
  /// transaction once the uploads end (or one fails): a commit per object
  /// cost a log write and a flush each. An object uploaded but still in
  /// the outbox (the process killed before that transaction) is uploaded
  /// again by the next sync, which finds the same bytes there.
  ///
  /// - Returns: how many were uploaded.
  /// - Throws: `SyncError.positionTaken` when the storage holds other bytes
  ///   at one of this device's positions; `.storage`.
  func upload(progress: ((SyncProgress) -> Void)? = nil) throws -> Int {
    // Blobs first, so that a record never reaches the storage before its attachment's content.
    _ = try uploadBlobs(progress: progress)
    let pending = try store.withSyncTransaction { try $0.outboxSeqs() }
    var sent: [UInt64] = []
    func forget() throws { try store.withSyncTransaction { rows in try sent.forEach(rows.removeFromOutbox) } }
    do {
      for (index, seq) in pending.enumerated() {
        // One object in memory at a time.
        guard let object = try store.withSyncTransaction({ try $0.outboxObject(seq: seq) }) else { continue }
        progress?(.step("sending object \(index + 1) of \(pending.count)"))
        switch try target.create(device: configuration.device, seq: seq, bytes: object) {
        case .created: break
        case .existed(let bytes) where bytes == object: break
        case .existed: throw SyncError.positionTaken(device: configuration.device, seq: seq)
        }
        sent.append(seq)
      }
    } catch {
      // Those sent leave now if they can; otherwise the next sync finds their bytes and they leave then.
      try? forget()
      throw error
    }
    try forget()
    return pending.count
  }

  /// Applies an epoch change from `epoch`: its cuts recorded, and this
  /// device's entry of the new epoch opened and saved when the keyring has
  /// none (a device removed, or unknown to the writer, stays outside).
  func enter(_ change: SyncEpochChange, from epoch: UInt32, writer: String, seq: UInt64, rows: SyncRows) throws {
    let epochs = SyncEpochState(rows: rows)
    try epochs.record(.init(writer: writer, seq: seq, cuts: change.cuts, removed: change.removed), from: epoch)
    // Objects this device applied beyond their cut (read before the change arrived) are void for
    // the others: send every record again, so that what they brought reaches all devices alike.
    if try rows.devices().contains(where: { $0.lastSeq > change.cuts[$0.device, default: 0] && $0.device != writer }) {
      try rows.markEverythingDirty()
      try rows.setValue("resend", "1")
    }
    if keys.keyring.key(epoch: change.number) == nil, keys.keyring.newest.epoch == epoch,
      let box = change.keys[configuration.device], let entry = keys.openEntry(box, epoch: change.number)
    {
      try keys.add(entry)
    }
    try epochs.resendVoidedWork(device: configuration.device, newest: keys.keyring.newest.epoch)
  }
}

extension SyncError {
  /// Runs `body` with the store's and the system's errors given as sync's.
  static func storing<Result>(_ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch let error as TaskerError {
      throw SyncError.store(error)
    } catch let error as SystemError {
      throw SyncError.storage(error)
    }
  }
}
