import CommandKit
import TaskCrypto
import TaskerCore

/// The payload of a change object (docs/formats/sync-storage.md,
/// *Payload*): read strictly, every rule checked before anything is used.
public struct SyncPayload: Sendable, Equatable {
  /// The writer's clock in Unix seconds (shown, never used for order).
  public var made: Int64
  /// The device's name, required in seq 1.
  public var deviceName: String?
  /// The writer's X25519 public key (`device.box`), 32 bytes.
  public var deviceBox: [UInt8]?
  /// An epoch change, when the object carries one.
  public var epochChange: SyncEpochChange?
  /// The records, no two with one kind and id.
  public var records: [SyncRecord]
  /// The last seq of each other device the writer had applied (`seen`).
  public var seen: [String: UInt64]?
  /// The writer's floor: its objects up to it may be folded away (0: none).
  public var floor: UInt64 = 0

  /// A payload.
  public init(
    made: Int64, deviceName: String?, deviceBox: [UInt8]? = nil, epochChange: SyncEpochChange? = nil,
    records: [SyncRecord], seen: [String: UInt64]? = nil, floor: UInt64 = 0
  ) {
    self.seen = seen
    self.floor = floor
    self.made = made
    self.deviceName = deviceName
    self.deviceBox = deviceBox
    self.epochChange = epochChange
    self.records = records
  }

  static let largestInteger: Int64 = (1 << 53) - 1
  static let maximumRecords = 10_000
  static let maximumHeads = 64
  static let maximumSuperseded = 100_000

  // MARK: - Writing

  /// The payload as compact JSON with sorted keys.
  public var encoded: [UInt8] {
    Self.encoded(
      made: made, deviceName: deviceName, deviceBox: deviceBox, epochChange: epochChange, seen: seen, floor: floor,
      records: records.map(Self.encoded(record:)))
  }

  /// The bytes `encoded` gives for a payload whose records are already in
  /// the record form's bytes (`value(of:).encoded` of each, in order), so
  /// a record encoded once for the store is not encoded again for its
  /// object: the same compact JSON with sorted keys, the records spliced
  /// in where `"records"` sorts.
  static func encoded(
    made: Int64, deviceName: String?, deviceBox: [UInt8]?, epochChange: SyncEpochChange?, seen: [String: UInt64]?,
    floor: UInt64, records: [[UInt8]]
  ) -> [UInt8] {
    var members: [String: JSONValue] = ["format": "tasker-sync-changes", "version": 1, "made": .integer(made)]
    if let deviceName {
      var device: [String: JSONValue] = ["name": .string(deviceName)]
      if let deviceBox { device["box"] = .string(Hex.encode(deviceBox)) }
      members["device"] = .object(device)
    }
    if let epochChange { members["epoch"] = epochChange.value }
    if let seen { members["seen"] = .object(seen.mapValues { .integer(Int64($0)) }) }
    if floor > 0 { members["floor"] = .integer(Int64(floor)) }
    var out: [UInt8] = [UInt8(ascii: "{")]
    out.reserveCapacity(records.reduce(256) { $0 + $1.count + 1 })
    // "records" takes its place among the other keys, sorted as JSONValue sorts an object's keys.
    for (index, key) in (Array(members.keys) + ["records"]).sorted().enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      JSONValue.append(string: key, to: &out)
      out.append(UInt8(ascii: ":"))
      guard let value = members[key] else {
        out.append(UInt8(ascii: "["))
        for (position, record) in records.enumerated() {
          if position > 0 { out.append(UInt8(ascii: ",")) }
          out.append(contentsOf: record)
        }
        out.append(UInt8(ascii: "]"))
        continue
      }
      out.append(contentsOf: value.encoded)
    }
    out.append(UInt8(ascii: "}"))
    return out
  }

  /// A record in the record form (the canonical form: `body` left out
  /// when empty; arrays sorted).
  public static func value(of record: SyncRecord) -> JSONValue {
    var members: [String: JSONValue] = [
      "kind": .string(record.kind.rawValue), "id": .string(record.id),
      "fields": .object(
        record.fields.mapValues { ["value": $0.value, "clock": .string($0.clock.text)] }),
    ]
    if let deleted = record.deleted { members["deleted"] = .string(deleted.text) }
    if !record.heads.isEmpty || !record.superseded.isEmpty {
      let heads = record.heads.sorted { $0.key < $1.key }.map { version, head -> JSONValue in
        ["version": .string(version), "clock": .string(head.clock.text), "text": .string(head.text)]
      }
      members["body"] = ["heads": .array(heads), "superseded": .strings(record.superseded.sorted())]
    }
    return .object(members)
  }

  /// `value(of: record).encoded`, byte for byte, written straight out
  /// rather than built as a value and then encoded (every record of a
  /// first sync or a pull is encoded once for its kept state): the record
  /// form's keys in sorted order (`body`, `deleted`, `fields`, `id`,
  /// `kind`; `clock` before `value`; `clock`, `text`, `version`; `heads`
  /// before `superseded`), each name and text through the one escaper,
  /// field names and head versions sorted as `JSONValue` sorts keys.
  public static func encoded(record: SyncRecord) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(256 + record.heads.values.reduce(0) { $0 + $1.text.utf8.count + 128 })
    func name(_ key: String) {
      JSONValue.append(string: key, to: &out)
      out.append(UInt8(ascii: ":"))
    }
    func text(_ value: String) { JSONValue.append(string: value, to: &out) }
    func comma() { out.append(UInt8(ascii: ",")) }
    out.append(UInt8(ascii: "{"))
    if !record.heads.isEmpty || !record.superseded.isEmpty {
      name("body")
      out.append(UInt8(ascii: "{"))
      name("heads")
      out.append(UInt8(ascii: "["))
      for (index, (version, head)) in record.heads.sorted(by: { $0.key < $1.key }).enumerated() {
        if index > 0 { comma() }
        out.append(UInt8(ascii: "{"))
        name("clock")
        text(head.clock.text)
        comma()
        name("text")
        text(head.text)
        comma()
        name("version")
        text(version)
        out.append(UInt8(ascii: "}"))
      }
      out.append(UInt8(ascii: "]"))
      comma()
      name("superseded")
      out.append(contentsOf: JSONValue.strings(record.superseded.sorted()).encoded)
      out.append(UInt8(ascii: "}"))
      comma()
    }
    if let deleted = record.deleted {
      name("deleted")
      text(deleted.text)
      comma()
    }
    name("fields")
    out.append(UInt8(ascii: "{"))
    for (index, (field, value)) in record.fields.sorted(by: { $0.key < $1.key }).enumerated() {
      if index > 0 { comma() }
      name(field)
      out.append(UInt8(ascii: "{"))
      name("clock")
      text(value.clock.text)
      comma()
      name("value")
      out.append(contentsOf: value.value.encoded)
      out.append(UInt8(ascii: "}"))
    }
    out.append(UInt8(ascii: "}"))
    comma()
    name("id")
    text(record.id)
    comma()
    name("kind")
    text(record.kind.rawValue)
    out.append(UInt8(ascii: "}"))
    return out
  }

  // MARK: - Reading

  /// Reads the payload of the object at `position`, sealed at `epoch`.
  ///
  /// - Throws: `SyncOutcome.malformedPayload` for any breach of a rule.
  public init(reading bytes: [UInt8], at position: SyncObjectFormat.Position, epoch: UInt32) throws(SyncOutcome) {
    guard let document = try? JSONDocument(parsing: bytes), case .object(let top) = document.value else {
      throw .malformedPayload
    }
    try Self.only(
      top, ["format", "version", "made", "device", "epoch", "seen", "floor", "records"],
      required: ["format", "version", "made", "records"])
    guard top["format"] == "tasker-sync-changes", top["version"] == 1 else { throw .malformedPayload }
    made = try Self.integer(top["made"])
    deviceBox = nil
    if let device = top["device"] {
      guard case .object(let members) = device else { throw .malformedPayload }
      try Self.only(members, ["name", "box"], required: ["name"])
      guard case .string(let name) = members["name"], (1...64).contains(name.unicodeScalars.count),
        !name.unicodeScalars.contains(where: Self.isControl)
      else { throw .malformedPayload }
      deviceName = name
      if let box = members["box"] {
        guard case .string(let text) = box, SyncHex.isID(text, bytes: AnonymousBox.keyByteCount) else {
          throw .malformedPayload
        }
        deviceBox = Hex.decode(text)
      }
    } else {
      guard position.seq != 1, top["epoch"] == nil else { throw .malformedPayload }
      deviceName = nil
    }
    epochChange = try top["epoch"].map { value throws(SyncOutcome) in
      try SyncEpochChange(reading: value, writer: Hex.encode(position.device), seq: position.seq, epoch: epoch)
    }
    if let value = top["seen"] {
      guard case .object(let entries) = value, entries.count <= 1024 else { throw .malformedPayload }
      var seen: [String: UInt64] = [:]
      for (device, seq) in entries {
        guard SyncHex.isID(device), device != Hex.encode(position.device) else { throw .malformedPayload }
        seen[device] = UInt64(try Self.integer(seq))
      }
      self.seen = seen
    }
    if let value = top["floor"] {
      let floor = try Self.integer(value)
      guard floor >= 1, UInt64(floor) < position.seq else { throw .malformedPayload }
      self.floor = UInt64(floor)
    }
    guard case .array(let values) = top["records"], values.count <= Self.maximumRecords else { throw .malformedPayload }
    var seen = Set<String>()
    records = []
    records.reserveCapacity(values.count)
    for value in values {
      let record = try Self.record(value)
      guard seen.insert(record.kind.rawValue + "/" + record.id).inserted else { throw .malformedPayload }
      records.append(record)
    }
  }

  /// Reads one value in the record form (a payload's, or a state kept by
  /// the store).
  ///
  /// - Throws: `SyncOutcome.malformedPayload`.
  public static func record(_ value: JSONValue) throws(SyncOutcome) -> SyncRecord {
    guard case .object(let members) = value else { throw .malformedPayload }
    try only(members, ["kind", "id", "fields", "deleted", "body"], required: ["kind", "id", "fields"])
    guard case .string(let kindName) = members["kind"], let kind = SyncRecord.Kind(rawValue: kindName),
      case .string(let id) = members["id"], SyncHex.isID(id), case .object(let fields) = members["fields"]
    else { throw .malformedPayload }
    var record = SyncRecord(kind: kind, id: id)
    for (name, field) in fields {
      guard case .object(let parts) = field else { throw .malformedPayload }
      try only(parts, ["value", "clock"], required: ["value", "clock"])
      let value = parts["value"]!
      guard try SyncFieldRules.isValid(value, field: name, kind: kind) else { throw .malformedPayload }
      record.fields[name] = SyncRecord.Field(value: value, clock: try clock(parts["clock"]))
    }
    if let deleted = members["deleted"] { record.deleted = try clock(deleted) }
    // An attachment is written whole, once: every field, and no body.
    if kind == .attachment {
      guard Set(record.fields.keys) == SyncFieldRules.attachmentFields, members["body"] == nil else {
        throw .malformedPayload
      }
    }
    if let body = members["body"] {
      guard case .object(let parts) = body else { throw .malformedPayload }
      try only(parts, ["heads", "superseded"], required: ["heads", "superseded"])
      guard case .array(let heads) = parts["heads"], heads.count <= maximumHeads,
        case .array(let superseded) = parts["superseded"], superseded.count <= maximumSuperseded
      else { throw .malformedPayload }
      for head in heads {
        guard case .object(let headParts) = head else { throw .malformedPayload }
        try only(headParts, ["version", "clock", "text"], required: ["version", "clock", "text"])
        guard case .string(let version) = headParts["version"], SyncHex.isID(version),
          case .string(let text) = headParts["text"], SyncFieldRules.isSealedValue(text),
          record.heads[version] == nil
        else { throw .malformedPayload }
        record.heads[version] = SyncRecord.Head(clock: try clock(headParts["clock"]), text: text)
      }
      for version in superseded {
        guard case .string(let id) = version, SyncHex.isID(id), record.superseded.insert(id).inserted else {
          throw .malformedPayload
        }
      }
    }
    return record
  }

  /// Refuses `members` unless every key is `allowed` and every `required`
  /// key is there (short lists, compared in place: this runs for every
  /// field of every record read).
  static func only(_ members: [String: JSONValue], _ allowed: [String], required: [String]) throws(SyncOutcome) {
    guard members.keys.allSatisfy(allowed.contains), required.allSatisfy({ members[$0] != nil }) else {
      throw .malformedPayload
    }
  }

  static func integer(_ value: JSONValue?) throws(SyncOutcome) -> Int64 {
    guard case .integer(let number) = value, (0...largestInteger).contains(number) else { throw .malformedPayload }
    return number
  }

  static func clock(_ value: JSONValue?) throws(SyncOutcome) -> SyncClock {
    guard case .string(let text) = value, let clock = SyncClock(text) else { throw .malformedPayload }
    return clock
  }

  static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
  }
}
