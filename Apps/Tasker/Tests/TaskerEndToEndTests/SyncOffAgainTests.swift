import Foundation
import TaskerTestSupport
import Testing

/// `tasker sync off`, then `tasker sync setup` with the same folder: a
/// new device id sends every record again, and what was changed while
/// sync was off reaches every device once.
@Suite("Sync off, then on again with the same target")
struct SyncOffAgainTests {
  @Test func aTaskDeletedWhileSyncWasOffIsDeletedEverywhereAndTheFirstObjectIsAccepted() throws {
    let devices = try ThreeDevices()
    let (a, b, c) = (devices.a, devices.b, devices.c)
    try a.ok(["add", "kept"])
    try syncRounds([a, b, c], orders: [[0, 1, 2]])
    try a.ok(["sync", "off"])
    // Deleted and edited while off: the deletion is both a change to send and a deleted state, which
    // the setup's first sync sends again; one payload must name each record once.
    try a.ok(["delete", try a.taskID("before removal")])
    try a.ok(["edit", try a.taskID("kept"), "--priority", "high"])
    try a.syncSetUp(devices.folder.path, name: "a again")
    // Every sync exits 0: nothing refused (a record named twice in one payload is malformed_payload).
    try syncRounds([a, b, c, a], orders: [[0, 1, 2, 3]])
    for device in [a, b, c] {
      let titles = try device.json(["list", "--json"])["tasks"] as? [[String: Any]] ?? []
      #expect(titles.compactMap { $0["title"] as? String } == ["kept"], "\(titles)")
      #expect(try device.json(["show", try device.taskID("kept"), "--json"])["priority"] as? String == "high")
    }
  }
}
