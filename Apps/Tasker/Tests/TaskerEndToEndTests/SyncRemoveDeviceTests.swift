import Foundation
import TaskerTestSupport
import Testing

/// `tasker sync remove-device` through the real binaries and a shared
/// folder: the removed device cannot read what is written afterwards, what
/// it writes afterwards reaches nobody, the others carry on at the new
/// epoch, and every refusal has its exit code and changes nothing.
@Suite("Sync: removing a device moves the sync key to a new epoch")
struct SyncRemoveDeviceTests {
  @Test func theRemovedDeviceReadsNothingWrittenAfterAndWritesToNobody() throws {
    let three = try ThreeDevices()
    let (a, b, c) = (three.a, three.b, three.c)
    let cID = try c.syncDeviceID()
    let removal = try a.json(["sync", "remove-device", cID, "--json"])
    #expect(removal["removed"] as? String == cID && removal["epoch"] as? Int == 2, "\(removal)")
    let aDevices = try #require(try a.json(["sync", "devices", "--json"])["devices"] as? [[String: Any]])
    #expect(aDevices.first { $0["id"] as? String == cID }?["removed"] as? Bool == true, "\(aDevices)")

    // B enters epoch 2. Then A writes a secret, and C writes something of its own at the old epoch.
    try b.ok(["sync", "now"])
    let bStatus = try b.json(["sync", "status", "--json"])
    #expect(bStatus["epoch"] as? Int == 2 && bStatus["outside"] as? Bool == false, "\(bStatus)")
    let canary = "CANARY-AFTER-REMOVAL-5d1f"
    try a.ok(["add", "after removal", "--notes", "-"], input: canary)
    try a.ok(["sync", "now"])
    try c.ok(["add", "from c after removal"])
    let outside = try c.tasker(["sync", "now"])
    #expect(outside.status == 19, "C is outside the new epoch: \(outside.stderr)")
    #expect(outside.stderr.contains("did not receive the sync key of epoch 2"), "\(outside.stderr)")
    let cStatus = try c.json(["sync", "status", "--json"])
    #expect(cStatus["outside"] as? Bool == true && cStatus["epoch"] as? Int == 1, "\(cStatus)")
    #expect(try c.taskTitles().sorted() == ["before removal", "from c after removal"], "C keeps what it had")

    // B reads A's secret; C's late object is void for it.
    let synced = try b.json(["sync", "now", "--json"])
    #expect((synced["refused"] as? [Any])?.isEmpty == true && synced["void"] as? Int == 1, "\(synced)")
    #expect(try b.taskTitles().sorted() == ["after removal", "before removal"])
    #expect(try b.json(["show", try b.taskID("after removal"), "--json"])["notes"] as? String == canary)
    try b.ok(["add", "from b at epoch 2"])
    try b.ok(["sync", "now"])
    try a.ok(["sync", "now"])
    #expect(try a.taskTitles().sorted() == ["after removal", "before removal", "from b at epoch 2"])

    // At the storage: A's and B's objects after the change are sealed at epoch 2, C's never.
    let aID = try a.syncDeviceID()
    let bID = try b.syncDeviceID()
    let aEpochs = try three.epochs(of: aID)
    let change = try #require(aEpochs.filter { $0.value == 1 }.keys.max(), "the change is sealed at epoch 1")
    #expect(aEpochs.filter { $0.key > change }.allSatisfy { $0.value == 2 } && aEpochs.keys.max()! > change)
    #expect(try three.epochs(of: bID).values.contains(2))
    #expect(try three.epochs(of: cID).values.allSatisfy { $0 == 1 })
    // C, syncing again, still reads nothing new and still exits 19.
    #expect(try c.tasker(["sync", "now"]).status == 19)
    #expect(try c.taskTitles().contains("from b at epoch 2") == false)
  }

  @Test func aDeviceThatWroteAtTheOldEpochAfterItsCutSendsItsChangesAgain() throws {
    let three = try ThreeDevices()
    let (a, b, c) = (three.a, three.b, three.c)
    try a.ok(["sync", "remove-device", try c.syncDeviceID()])
    // B's sync sends its change at epoch 1 (it has not seen the removal yet), after its cut:
    // void for A. Then B applies the change and sends every record again at epoch 2.
    try b.ok(["add", "written after the cut"])
    try b.ok(["sync", "now"])
    let bEpochs = try three.epochs(of: try b.syncDeviceID())
    let late = try #require(bEpochs.filter { $0.value == 1 }.keys.max())
    #expect(bEpochs.filter { $0.key > late }.values.allSatisfy { $0 == 2 } && bEpochs.keys.max()! > late)
    let synced = try a.json(["sync", "now", "--json"])
    #expect(synced["void"] as? Int == 1, "B's late object is void: \(synced)")
    #expect(try a.taskTitles().sorted() == ["before removal", "written after the cut"])
    #expect(try b.json(["sync", "status", "--json"])["epoch"] as? Int == 2)
  }

  @Test func everyRefusalHasItsCodeAndChangesNothing() throws {
    let three = try ThreeDevices()
    let (a, c) = (three.a, three.c)
    let storage = try storageFiles(three.root)
    let aID = try a.syncDeviceID()
    let cases: [([String], Int32, String)] = [
      (["sync", "remove-device", aID], 64, "cannot remove itself"),
      (["sync", "remove-device", String(repeating: "ab", count: 16)], 64, "no device"),
      (["sync", "remove-device", "C0FFEE"], 64, "32 lowercase hex digits"),
    ]
    for (arguments, status, message) in cases {
      let result = try a.tasker(arguments)
      #expect(result.status == status, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
    #expect(try storageFiles(three.root) == storage, "nothing written")
    #expect(try a.json(["sync", "status", "--json"])["epoch"] as? Int == 1)

    // A device that never sent its box key (set up, never synced) is not known, so it cannot be kept or removed.
    try a.ok(["sync", "remove-device", try c.syncDeviceID()])
    let again = try a.tasker(["sync", "remove-device", try c.syncDeviceID()])
    #expect(again.status == 64 && again.stderr.contains("no device"), "removed already: \(again.stderr)")
  }
}
