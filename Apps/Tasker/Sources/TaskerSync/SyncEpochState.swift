import TaskerCore

/// What this device keeps of epoch changes, in its sync values: per old
/// epoch the change applied (whose object, which cuts, which devices were
/// removed), the last seq it sealed at each epoch, and a removal this
/// device began and has not finished. Local state, like the positions:
/// it only ever narrows what is applied (docs/formats/sync-storage.md,
/// *Removing a device*).
struct SyncEpochState {
  let rows: SyncRows

  static func wroteName(_ epoch: UInt32) -> String { "wrote:\(epoch)" }

  /// The change from `epoch` this device applied or wrote: who wrote it,
  /// at which seq, the cuts and the removed devices.
  struct Applied: Equatable {
    var writer: String
    var seq: UInt64
    var cuts: [String: UInt64]
    var removed: Set<String>
  }

  /// The change applied from `epoch`, nil when none.
  func applied(from epoch: UInt32) throws -> Applied? {
    guard let text = try rows.value("change:\(epoch)") else { return nil }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard lines.count == 3 else { return nil }
    let head = lines[0].split(separator: " ").map(String.init)
    guard head.count == 2, let seq = UInt64(head[1]) else { return nil }
    var cuts: [String: UInt64] = [:]
    for pair in lines[1].split(separator: " ") {
      let parts = pair.split(separator: ":")
      guard parts.count == 2, let cut = UInt64(parts[1]) else { return nil }
      cuts[String(parts[0])] = cut
    }
    return Applied(writer: head[0], seq: seq, cuts: cuts, removed: Set(lines[2].split(separator: " ").map(String.init)))
  }

  /// Records the change from `epoch`.
  func record(_ change: Applied, from epoch: UInt32) throws {
    let cuts = change.cuts.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: " ")
    try rows.setValue(
      "change:\(epoch)", "\(change.writer) \(change.seq)\n\(cuts)\n\(change.removed.sorted().joined(separator: " "))")
  }

  /// Whether the object of `device` at `seq`, sealed at `epoch`, is void:
  /// a change from `epoch` was applied and the seq is above the device's cut.
  func isVoid(device: String, seq: UInt64, epoch: UInt32) throws -> Bool {
    guard let change = try applied(from: epoch) else { return false }
    return seq > change.cuts[device, default: 0]
  }

  /// The last seq this device sealed at `epoch`, 0 when none.
  func wrote(at epoch: UInt32) throws -> UInt64 { UInt64(try rows.value(Self.wroteName(epoch)) ?? "0") ?? 0 }

  /// The devices removed by every change applied, oldest epoch first.
  func removedDevices(below newest: UInt32) throws -> Set<String> {
    var removed = Set<String>()
    for epoch in 1..<max(newest, 1) { removed.formUnion(try applied(from: epoch)?.removed ?? []) }
    return removed
  }

  /// Marks every record to be sent again when this device sealed objects
  /// at an epoch after its own cut there (they are void for the others)
  /// and it has moved on to a later epoch; once per such epoch.
  func resendVoidedWork(device: String, newest: UInt32) throws {
    for epoch in 1..<max(newest, 1) {
      guard let change = try applied(from: epoch), try wrote(at: epoch) > change.cuts[device, default: 0],
        try rows.value("resent:\(epoch)") == nil
      else { continue }
      try rows.markEverythingDirty()
      try rows.setValue("resend", "1")
      try rows.setValue("resent:\(epoch)", "1")
    }
  }

  /// A removal this device began: from which epoch, which devices.
  func pendingRemoval() throws -> (from: UInt32, devices: Set<String>)? {
    guard let text = try rows.value("removing"), !text.isEmpty else { return nil }
    let parts = text.split(separator: " ").map(String.init)
    guard let from = parts.first.flatMap({ UInt32($0) }) else { return nil }
    return (from, Set(parts.dropFirst()))
  }

  /// Records (or, with nil, clears) a removal begun.
  func setPendingRemoval(_ removal: (from: UInt32, devices: Set<String>)?) throws {
    try rows.setValue("removing", removal.map { "\($0.from) " + $0.devices.sorted().joined(separator: " ") } ?? "")
  }
}

/// Where this device stands among epochs, for `tasker sync status`.
public struct SyncEpochStatus: Sendable, Equatable {
  /// The keyring's newest epoch: what this device seals under.
  public var epoch: UInt32
  /// Every device removed by a change this device applied or wrote.
  public var removed: Set<String>
  /// Whether a change from `epoch` was applied without this device
  /// receiving the next key (it was removed, or not known to the remover).
  public var outside: Bool
}

extension SyncSetup {
  /// This device's epoch, the devices removed, and whether it is outside.
  ///
  /// - Throws: `SyncError.syncKeyMissing`, `.recordRefused`; store errors.
  public func epochStatus() throws -> SyncEpochStatus {
    let newest = try keyring().newest.epoch
    return try store.withSyncTransaction { rows in
      let epochs = SyncEpochState(rows: rows)
      return SyncEpochStatus(
        epoch: newest, removed: try epochs.removedDevices(below: newest + 1),
        outside: try epochs.applied(from: newest) != nil)
    }
  }
}
