import CommandKit
import TaskCrypto

/// An epoch change (docs/formats/sync-storage.md, *Removing a device*):
/// the devices removed, where each device's objects of the old epoch end,
/// and the new epoch's keyring entry sealed to each remaining device.
public struct SyncEpochChange: Sendable, Equatable {
  /// The new epoch: the object's header epoch plus 1.
  public var number: UInt32
  /// The removed devices' ids.
  public var removed: Set<String>
  /// Per device id, the last seq of the old epoch that counts.
  public var cuts: [String: UInt64]
  /// Per remaining device id, the sealed box of `u32(number) || key`.
  public var keys: [String: [UInt8]]

  /// A change.
  public init(number: UInt32, removed: Set<String>, cuts: [String: UInt64], keys: [String: [UInt8]]) {
    self.number = number
    self.removed = removed
    self.cuts = cuts
    self.keys = keys
  }

  static let maximumRemoved = 64
  static let maximumDevices = 1_024
  /// A sealed entry's length: 36 bytes and the box's 48.
  static let sealedEntryByteCount = SyncKey.entryByteCount + AnonymousBox.overheadByteCount

  /// The change as the payload's `epoch` member.
  var value: JSONValue {
    [
      "number": .integer(Int64(number)), "removed": .strings(removed.sorted()),
      "cuts": .object(cuts.mapValues { .integer(Int64($0)) }),
      "keys": .object(keys.mapValues { .string(Hex.encode($0)) }),
    ]
  }

  /// Reads the `epoch` member of the object at `seq` of `writer`, sealed
  /// at `epoch`.
  ///
  /// - Throws: `SyncOutcome.malformedPayload` for any breach of the rules.
  init(reading value: JSONValue, writer: String, seq: UInt64, epoch: UInt32) throws(SyncOutcome) {
    guard case .object(let members) = value else { throw .malformedPayload }
    try SyncPayload.only(
      members, ["number", "removed", "cuts", "keys"], required: ["number", "removed", "cuts", "keys"])
    guard epoch < UInt32.max, case .integer(let number) = members["number"], number == Int64(epoch) + 1,
      case .array(let removedValues) = members["removed"], (1...Self.maximumRemoved).contains(removedValues.count),
      case .object(let cutValues) = members["cuts"], (1...Self.maximumDevices).contains(cutValues.count),
      case .object(let keyValues) = members["keys"], keyValues.count <= Self.maximumDevices
    else { throw .malformedPayload }
    var removed = Set<String>()
    for device in removedValues {
      guard case .string(let id) = device, SyncHex.isID(id), id != writer, removed.insert(id).inserted else {
        throw .malformedPayload
      }
    }
    var cuts: [String: UInt64] = [:]
    for (device, cut) in cutValues {
      guard SyncHex.isID(device) else { throw .malformedPayload }
      cuts[device] = UInt64(try SyncPayload.integer(cut))
    }
    guard cuts[writer] == seq else { throw .malformedPayload }
    var keys: [String: [UInt8]] = [:]
    for (device, box) in keyValues {
      guard SyncHex.isID(device), device != writer, !removed.contains(device), case .string(let text) = box,
        SyncHex.isID(text, bytes: Self.sealedEntryByteCount), let bytes = Hex.decode(text)
      else { throw .malformedPayload }
      keys[device] = bytes
    }
    self.init(number: UInt32(number), removed: removed, cuts: cuts, keys: keys)
  }
}
