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
  let key: SyncKey
  let target: any SyncTarget
  let targetID: [UInt8]

  /// An engine for `store` as `configuration` sets it up.
  ///
  /// - Throws: `SyncError.recordRefused` for a target id that is not hex.
  public init(store: TaskStore, configuration: SyncConfiguration, key: SyncKey, target: any SyncTarget) throws {
    guard let targetID = Hex.decode(configuration.targetID), targetID.count == 16 else {
      throw SyncError.recordRefused(item: "configuration", outcome: .malformed)
    }
    self.store = store
    self.configuration = configuration
    self.key = key
    self.target = target
    self.targetID = targetID
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
  public func run(progress: ((String) -> Void)? = nil) throws -> Report {
    let lock = PosixFileSystem.directory(of: store.databasePath) + "/tasker.sync.lock"
    return try SyncError.storing {
      try FileLock.withExclusive(lock) {
        try checkMarker()
        var report = Report()
        try capture()
        report.uploaded += try upload(progress: progress)
        try pull(into: &report, progress: progress)
        report.uploaded += try upload(progress: progress)
        return report
      }
    }
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
      found = try SyncObjectFormat.openMarker(marker, key: key)
    } catch let outcome as SyncOutcome {
      throw SyncError.markerRefused(path: path, outcome: outcome)
    }
    guard found == targetID else { throw SyncError.targetChanged(path: path) }
  }

  func capturing(_ rows: SyncRows) -> SyncCapture {
    SyncCapture(rows: rows, configuration: configuration, key: key, targetID: targetID)
  }

  /// Seals the local changes into the outbox.
  func capture() throws {
    try store.withSyncTransaction { rows in
      let capture = capturing(rows)
      try capture.emit(try capture.changedRecords())
    }
  }

  /// Uploads the outbox in seq order; each object leaves it once the
  /// storage holds exactly its bytes.
  ///
  /// - Returns: how many were uploaded.
  /// - Throws: `SyncError.positionTaken` when the storage holds other bytes
  ///   at one of this device's positions; `.storage`.
  func upload(progress: ((String) -> Void)? = nil) throws -> Int {
    let pending = try store.withSyncTransaction { try $0.outbox() }
    for (index, (seq, object)) in pending.enumerated() {
      progress?("sending object \(index + 1) of \(pending.count)")
      switch try target.create(device: configuration.device, seq: seq, bytes: object) {
      case .created: break
      case .existed(let bytes) where bytes == object: break
      case .existed: throw SyncError.positionTaken(device: configuration.device, seq: seq)
      }
      try store.withSyncTransaction { try $0.removeFromOutbox(seq: seq) }
    }
    return pending.count
  }

  /// Reads and applies every other device's new objects, in order.
  func pull(into report: inout Report, progress: ((String) -> Void)? = nil) throws {
    let known = Dictionary(
      uniqueKeysWithValues: try store.withSyncTransaction { try $0.devices() }.map { ($0.device, $0) })
    for device in try target.devices() where device != configuration.device {
      var row = known[device] ?? SyncDeviceRow(device: device, name: nil, lastSeq: 0, lastMade: nil, lastSeen: nil)
      let present = Set(try target.sequence(of: device))
      var next = row.lastSeq + 1
      while present.contains(next) {
        progress?("applying object \(next) of device \(row.name ?? device)")
        guard let applied = try apply(device: device, seq: next, row: &row, report: &report) else { break }
        report.applied[device, default: 0] += 1
        report.recordsChanged += applied
        next += 1
      }
      if !present.contains(next), let later = present.filter({ $0 > next }).min(),
        !report.refused.contains(where: { $0.device == device })
      {
        report.refused.append(.init(device: device, seq: next, reason: "missing (object \(later) is there)"))
      }
    }
  }

  /// Applies one object whole, or records why not.
  ///
  /// - Returns: the records changed, or nil when it was refused.
  func apply(device: String, seq: UInt64, row: inout SyncDeviceRow, report: inout Report) throws -> Int? {
    let position = SyncObjectFormat.Position(device: Hex.decode(device)!, seq: seq)
    let payload: SyncPayload
    do {
      let bytes =
        try target.read(device: device, seq: seq, limit: SyncObjectFormat.maximumObjectByteCount) ?? []
      payload = try SyncPayload(
        reading: try SyncObjectFormat.open(bytes, at: position, targetID: targetID, key: key), seq: seq)
    } catch let outcome as SyncOutcome {
      report.refused.append(.init(device: device, seq: seq, reason: outcome.rawValue))
      return nil
    }
    var removed: [String] = []
    let changed: Int
    do {
      changed = try store.withSyncTransaction { rows -> Int in
        let capture = capturing(rows)
        try capture.emit(try capture.changedRecords())
        var count = 0
        for record in payload.records {
          if try SyncApply(rows: rows, capture: capture).apply(record, removing: &removed) { count += 1 }
        }
        row.name = payload.deviceName ?? row.name
        row.lastSeq = seq
        row.lastMade = payload.made
        row.lastSeen = Int64(Date().timeIntervalSince1970)
        try rows.putDevice(row)
        return count
      }
    } catch SyncApply.Refusal.bodyUnreadable {
      report.refused.append(.init(device: device, seq: seq, reason: SyncOutcome.bodyUnreadable.rawValue))
      return nil
    }
    store.removeAttachmentFiles(removed)
    return changed
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
