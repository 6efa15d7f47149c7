import CommandKit
import Foundation
import TaskCrypto
import TaskerCore
import TaskerTestSupport
import Testing

@testable import TaskerSync

/// Epoch changes at the library level, where a test can do what the
/// removed device could: forge objects under the old epoch's key, and
/// interrupt a removal between its steps.
@Suite("Sync epochs: forged objects after a cut are void, an interrupted removal is finished")
struct SyncEpochTests {
  /// One device with its own store, box key and keyring (saved in memory).
  final class Device {
    let directory: TemporaryDirectory
    let store: TaskStore
    let configuration: SyncConfiguration
    let box: SecureBytes
    var keyringValue: SecureBytes
    /// When set, the next keyring save throws (a crash between the steps).
    var failNextSave = false

    init(
      name: String, id: String = SyncHex.randomID(), folder: String, targetID: String, keyring: SyncKeyring,
      noteKeys: Keyring
    ) throws {
      directory = try TemporaryDirectory()
      store = try TaskStore(databasePath: directory.path("t.db"), keys: noteKeys)
      configuration = SyncConfiguration(folder: folder, targetID: targetID, device: id, name: name)
      box = try AnonymousBox.generateKeyPair().secretKey
      keyringValue = keyring.itemValue
    }

    struct Crash: Error {}

    func engine() throws -> SyncEngine {
      let keys = try SyncKeys(keyring: try SyncKeyring(itemValue: keyringValue), boxSecretKey: box) { value in
        if self.failNextSave {
          self.failNextSave = false
          throw Crash()
        }
        self.keyringValue = value
      }
      return try SyncEngine(
        store: store, configuration: configuration, keys: keys, target: FolderTarget(root: configuration.root))
    }

    var epoch: UInt32 { (try? SyncKeyring(itemValue: keyringValue).newest.epoch) ?? 0 }
    func titles() throws -> [String] { try store.tasks(.all).map(\.title).sorted() }
    @discardableResult func sync() throws -> SyncEngine.Report { try engine().run() }
  }

  let folder: TemporaryDirectory
  let targetID: String
  let noteKeys: Keyring
  let a: Device
  let b: Device
  let c: Device

  init() throws {
    folder = try TemporaryDirectory()
    let keyring = try SyncKeyring.generate().keyring
    let noteKeys = try Keyring.generate()
    self.noteKeys = noteKeys
    targetID = SyncHex.randomID()
    let target = FolderTarget(root: folder.path + "/tasker-sync")
    try target.prepare()
    _ = try target.createMarker(SyncObjectFormat.marker(targetID: Hex.decode(targetID)!, key: keyring.newest))
    a = try Device(
      name: "a", id: String(repeating: "ff", count: 16), folder: folder.path, targetID: targetID, keyring: keyring,
      noteKeys: noteKeys)
    b = try Device(
      name: "b", id: String(repeating: "00", count: 16), folder: folder.path, targetID: targetID, keyring: keyring,
      noteKeys: noteKeys)
    c = try Device(
      name: "c", id: String(repeating: "80", count: 16), folder: folder.path, targetID: targetID, keyring: keyring,
      noteKeys: noteKeys)
    for device in [a, b, c] {
      _ = try device.store.addTask(TaskDraft(title: "from \(device.configuration.name)"))
      try device.sync()
    }
    try a.sync()
    try b.sync()
  }

  /// C, holding the epoch-1 key, seals `title` as device `victim`'s next object.
  func forge(_ title: String, as victim: Device, seq: UInt64) throws {
    let clock = SyncClock(time: UInt64(Date().timeIntervalSince1970 * 1000) << 16, device: victim.configuration.device)
    var record = SyncRecord(kind: .task, id: SyncHex.randomID())
    for (name, value) in [
      ("title", JSONValue.string(title)), ("status", "open"), ("priority", 0), ("created_at", 1_764_547_200),
      ("contexts", ""),
    ] as [(String, JSONValue)] {
      record.fields[name] = SyncRecord.Field(value: value, clock: clock)
    }
    let payload = SyncPayload(made: 1, deviceName: "b", records: [record]).encoded
    let device = Hex.decode(victim.configuration.device)!
    let object = try SyncObjectFormat.seal(
      payload, at: .init(device: device, seq: seq), targetID: Hex.decode(targetID)!,
      key: try SyncKeyring(itemValue: c.keyringValue).newest)
    #expect(
      try FolderTarget(root: folder.path + "/tasker-sync").create(
        device: victim.configuration.device, seq: seq, bytes: object) == .created)
  }

  @Test func whatTheRemovedDeviceForgesAfterTheCutIsVoid() throws {
    try a.engine().removeDevices([c.configuration.device])
    #expect(a.epoch == 2)
    let bNext = UInt64(try b.store.withSyncTransaction { try $0.value("next_seq") } ?? "1")!
    // Before B has the change: C forges "B's" next object at epoch 1.
    try forge("forged by c", as: b, seq: bNext)
    let report = try a.sync()
    #expect(report.void == 1 && report.refused.isEmpty, "\(report)")
    #expect(try a.titles() == ["from a", "from b", "from c"])
    // B applies the change, enters epoch 2; its own next position is taken by the forgery.
    #expect(throws: SyncError.positionTaken(device: b.configuration.device, seq: bNext)) {
      _ = try b.store.addTask(TaskDraft(title: "b at epoch 2"))
      try b.sync()
    }
  }

  @Test func aDeletionInAnObjectMadeVoidIsSentAgainAtTheNewEpoch() throws {
    try a.engine().removeDevices([c.configuration.device])
    // B deletes a task before it has seen the change: that object is past B's cut, void for A.
    let doomed = try #require(try b.store.tasks(.all).first { $0.title == "from a" })
    try b.store.deleteTask(id: doomed.id)
    _ = try b.store.addTask(TaskDraft(title: "b after the cut"))
    try b.sync()
    #expect(b.epoch == 2)
    let report = try a.sync()
    #expect(report.void == 1 && report.refused.isEmpty, "\(report)")
    #expect(try a.titles() == ["b after the cut", "from b", "from c"], "the deletion came again at epoch 2")
    #expect(try b.titles() == ["b after the cut", "from b", "from c"])
  }

  @Test func aRemovalInterruptedAfterItBeganIsFinishedByRunningItAgain() throws {
    a.failNextSave = true
    #expect(throws: Device.Crash.self) { try a.engine().removeDevices([c.configuration.device]) }
    #expect(a.epoch == 1, "the new key was not saved")
    #expect(throws: SyncError.removalInterrupted(devices: [c.configuration.device])) { try a.sync() }
    #expect(throws: SyncError.removalInterrupted(devices: [c.configuration.device])) {
      try a.engine().removeDevices([b.configuration.device])
    }
    try a.engine().removeDevices([c.configuration.device])
    #expect(a.epoch == 2)
    try b.sync()
    #expect(b.epoch == 2)
    #expect(throws: SyncError.outsideEpoch(epoch: 2)) { try c.sync() }
    #expect(c.epoch == 1)
  }

  @Test func aSecondChangeFromTheSameEpochIsAConflict() throws {
    // A key holder with the storage serves a late device another object at a position A had
    // already read (so not void): an epoch change of its own. The device applies one change, refuses the other.
    try a.engine().removeDevices([c.configuration.device])
    // D joins with a keyring made after the removal (both epochs).
    let late = try Device(
      name: "d", folder: folder.path, targetID: targetID, keyring: try SyncKeyring(itemValue: a.keyringValue),
      noteKeys: noteKeys)
    let bLast = try #require(
      try a.store.withSyncTransaction { try $0.devices() }.first { $0.device == b.configuration.device }?.lastSeq)
    let change = SyncEpochChange(
      number: 2, removed: [c.configuration.device],
      cuts: [b.configuration.device: bLast, a.configuration.device: 1_000], keys: [:])
    let payload = SyncPayload(made: 1, deviceName: "b", epochChange: change, records: []).encoded
    let object = try SyncObjectFormat.seal(
      payload, at: .init(device: Hex.decode(b.configuration.device)!, seq: bLast), targetID: Hex.decode(targetID)!,
      key: try SyncKeyring(itemValue: c.keyringValue).newest)
    try Data(object).write(
      to: URL(fileURLWithPath: b.configuration.root + "/d/\(b.configuration.device)/" + String(format: "%016x", bLast)))
    let report = try late.sync()
    #expect(report.refused.map(\.reason).contains("epoch_conflict"), "\(report)")
  }

  @Test func anObjectOfTheNewEpochReadBeforeTheChangeWaitsForIt() throws {
    // D (id 40…) reads B's log (00…) before A's (ff…): B's first object at epoch 2 comes
    // before the change that brings D the key, in the same sync.
    let d = try Device(
      name: "d", id: String(repeating: "40", count: 16), folder: folder.path, targetID: targetID,
      keyring: try SyncKeyring(itemValue: a.keyringValue), noteKeys: noteKeys)
    _ = try d.store.addTask(TaskDraft(title: "from d"))
    try d.sync()
    try a.sync()
    try a.engine().removeDevices([c.configuration.device])
    try b.sync()
    _ = try b.store.addTask(TaskDraft(title: "b at epoch 2"))
    try b.sync()
    #expect(b.epoch == 2)
    let report = try d.sync()
    #expect(report.refused.isEmpty, "\(report)")
    #expect(d.epoch == 2)
    #expect(try d.titles() == ["b at epoch 2", "from a", "from b", "from c", "from d"])
  }
}
