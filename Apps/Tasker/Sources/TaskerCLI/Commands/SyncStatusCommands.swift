import CommandKit
import TaskerCore
import TaskerSync

/// `tasker sync now`.
struct SyncNowCommand: Command {
  static let spec = CommandSpec(
    name: "now", abstract: "Send this device's changes and apply every other device's new ones.",
    json: JSONShape(
      fields: ["uploaded", "applied", "records_changed", "refused", "void", "read_past_folds", "compaction"],
      help: "objects uploaded, objects applied (device, objects), records changed here, what was refused "
        + "(device, seq, reason), how many objects were void (sealed at an old epoch after their cut), how many "
        + "were read past because a fold holds them, and compaction: folded (objects the fold wrote), removed "
        + "(this device's objects removed from the storage), blobs_removed (this device's blobs of deleted "
        + "attachments removed, once every device has the deletion), floor."),
    discussion: "A second sync of the same database waits for the first. An object that is forged, altered, "
      + "moved, replayed or out of its place is refused whole: nothing of it is applied, its device's later "
      + "objects wait, and the command exits 61 after applying the rest. The local database is changed only by "
      + "objects that were accepted. On a terminal, standard error shows a line per object sent or applied and "
      + "one redrawn per attachment's blob as it is sent (none with -q or without a terminal).",
    example: "tasker sync now")

  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    try Self.sync(context, json: json, compacting: false)
  }

  /// Runs one sync (compacting when asked), prints its report and exits
  /// 61 when something was refused.
  static func sync(_ context: CommandContext, json: Bool, compacting: Bool) throws {
    // A line per object sent or applied, and one redrawn per attachment's blob, only on a terminal.
    let engine = try SyncCommand.engine(context)
    let report = try SyncProgressLines.around(context.streams) { try engine.run(progress: $0, compacting: compacting) }
    let compaction = report.compaction
    if json {
      try context.printJSON([
        "uploaded": .int(report.uploaded),
        "applied": .array(
          report.applied.sorted { $0.key < $1.key }.map { ["device": .string($0.key), "objects": .int($0.value)] }),
        "records_changed": .int(report.recordsChanged), "void": .int(report.void),
        "read_past_folds": .int(report.folded),
        "compaction": [
          "folded": .int(compaction.folded), "removed": .int(compaction.removed),
          "blobs_removed": .int(compaction.blobsRemoved), "floor": .int(Int(compaction.floor)),
        ],
        "refused": .array(
          report.refused.map { ["device": .string($0.device), "seq": .int(Int($0.seq)), "reason": .string($0.reason)] }),
      ])
    } else {
      let applied = report.applied.values.reduce(0, +)
      try context.print(
        "synced: \(report.uploaded) object(s) sent, \(applied) applied from \(report.applied.count) device(s), "
          + "\(report.recordsChanged) record(s) changed here")
      if compaction.folded > 0 || compaction.removed > 0 {
        try context.print(
          "compacted: \(compaction.folded) object(s) hold the fold, \(compaction.removed) older one(s) removed")
      }
      if compaction.blobsRemoved > 0 {
        try context.print("removed \(compaction.blobsRemoved) blob(s) of deleted attachments from the storage")
      }
      for refusal in report.refused {
        context.printError(
          "tasker: refused object \(refusal.seq) of device \(refusal.device): \(refusal.reason); nothing of it applied")
      }
    }
    guard report.refused.isEmpty else { throw SyncCommandFailure.refused(count: report.refused.count) }
  }
}

/// `tasker sync compact`.
struct SyncCompactCommand: Command {
  static let spec = CommandSpec(
    name: "compact",
    abstract: "Sync, then fold this device's log into one copy of every record and remove what every device has.",
    json: SyncNowCommand.spec.json,
    discussion: "A sync folds by itself once this device has written more than 512 objects since its last fold. "
      + "An object leaves the storage only once every device this one knows (and has not removed) has applied "
      + "it; a device set up later reads the fold. Objects that carry an epoch change are never removed. The blob "
      + "of a deleted attachment is removed once every device has the deletion. Only this device's own objects "
      + "and blobs are ever removed.",
    example: "tasker sync compact")

  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    try SyncNowCommand.sync(context, json: json, compacting: true)
  }
}

/// What `sync now` exits with when the storage held something refused.
enum SyncCommandFailure: Error, CommandFailure {
  /// `count` objects were refused (or missing in a device's sequence).
  case refused(count: Int)

  var exitCode: ExitCode { .syncRefused }
  var message: String {
    guard case .refused(let count) = self else { return "" }
    return "\(count) object(s) at the storage were refused; everything else was applied"
  }
  var hint: String? {
    "the storage (or someone with access to it) changed what a device wrote, or an object has not arrived yet; "
      + "'tasker sync status' shows how far each device was read"
  }
}

/// `tasker sync status`.
struct SyncStatusCommand: Command {
  static let spec = CommandSpec(
    name: "status", abstract: "Show the target, this device, and how far each other device has been read.",
    json: JSONShape(
      fields: ["kind", "target", "device", "name", "target_id", "epoch", "outside", "devices"],
      help: "the set-up target (kind folder or webdav) and this device; the sync key's epoch, and outside: true "
        + "when this device did not receive the next one; devices: id, name, last_seq, last_made, last_seen, "
        + "removed."),
    discussion: "The storage can withhold a device's newest objects; last_seq and last_seen show what this "
      + "device has from each. Reads the database and the vault; sends nothing.",
    example: "tasker sync status --json")

  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  /// The target and this device as JSON; with `devices`, the devices read.
  static func json(
    _ configuration: SyncConfiguration, epochs: SyncEpochStatus, devices: [SyncDeviceRow]?
  ) -> JSONValue {
    let kind: String
    switch configuration.target {
    case .folder: kind = "folder"
    case .webdav: kind = "webdav"
    }
    var members: [String: JSONValue] = [
      "kind": .string(kind), "target": .string(configuration.location), "device": .string(configuration.device),
      "name": .string(configuration.name), "target_id": .string(configuration.targetID),
      "epoch": .int(Int(epochs.epoch)), "outside": .bool(epochs.outside),
    ]
    if let devices { members["devices"] = .array(devices.map { SyncDevicesCommand.json($0, removed: epochs.removed) }) }
    return .object(members)
  }

  func run(_ context: CommandContext) throws {
    let setup = try SyncCommand.setup(context)
    let configuration = try setup.configuration()
    let devices = try setup.store.withSyncTransaction { try $0.devices() }
    let epochs = try setup.epochStatus()
    if json { return try context.printJSON(Self.json(configuration, epochs: epochs, devices: devices)) }
    try context.print("target: \(configuration.root)")
    try context.print("this device: \(configuration.name) (\(configuration.device))")
    try context.print(
      "sync key: epoch \(epochs.epoch)"
        + (epochs.outside ? " (outside: this device did not receive the next epoch's key)" : ""))
    for device in devices { try context.print(SyncDevicesCommand.line(device, removed: epochs.removed)) }
  }
}

/// `tasker sync devices`.
struct SyncDevicesCommand: Command {
  static let spec = CommandSpec(
    name: "devices", abstract: "List the devices this one has read objects from.",
    json: JSONShape(fields: ["devices"], help: "each with id, name, last_seq, last_made, last_seen, removed."),
    example: "tasker sync devices")

  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  static func json(_ device: SyncDeviceRow, removed: Set<String>) -> JSONValue {
    [
      "id": .string(device.device), "name": .optional(device.name), "last_seq": .int(Int(device.lastSeq)),
      "last_made": TimeStamp.json(seconds: device.lastMade), "last_seen": TimeStamp.json(seconds: device.lastSeen),
      "removed": .bool(removed.contains(device.device)),
    ]
  }

  static func line(_ device: SyncDeviceRow, removed: Set<String>) -> String {
    [
      device.device, device.name ?? "(unnamed)", "object \(device.lastSeq)",
      "made \(device.lastMade.map { TimeStamp.utc(seconds: $0) } ?? "-")",
      "read \(device.lastSeen.map { TimeStamp.utc(seconds: $0) } ?? "-")",
    ].joined(separator: "\t") + (removed.contains(device.device) ? "\tremoved" : "")
  }

  func run(_ context: CommandContext) throws {
    let setup = try SyncCommand.setup(context)
    _ = try setup.configuration()
    let devices = try setup.store.withSyncTransaction { try $0.devices() }
    let removed = try setup.epochStatus().removed
    if json { return try context.printJSON(["devices": .array(devices.map { Self.json($0, removed: removed) })]) }
    for device in devices { try context.print(Self.line(device, removed: removed)) }
  }
}
