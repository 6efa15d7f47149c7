import Foundation
import TaskerTestSupport
import Testing

/// Two syncs of one database at once: the second waits for the first
/// (the home's `tasker.sync.lock`), and nothing is sent or applied twice.
@Suite("Sync: one sync at a time on a device")
struct SyncLockTests {
  @Test func aSyncWaitsWhileAnotherHoldsTheLock() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.ok(["sync", "setup", folder.path, "--name", "a"])
    try a.ok(["add", "first"])
    let lock = a.home.directory + "/tasker.sync.lock"
    let holder = try Binary(path: Binary.which("flock")).start([lock, "sleep", "2"])
    usleep(300_000)
    let started = Date()
    let waited = try a.tasker(["sync", "now"])
    let elapsed = Date().timeIntervalSince(started)
    #expect(try holder.finish().status == 0)
    #expect(waited.status == 0, "\(waited.stderr)")
    #expect(elapsed > 1.2, "the sync waited for the lock: \(elapsed) s")
  }

  @Test func twoSyncsAtOnceSendEachChangeOnce() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    let b = try TestDevice(passphrase: "device b")
    try a.ok(["sync", "setup", folder.path, "--name", "a"])
    try a.ok(["sync", "now"])
    try b.importKeys(from: a)
    try b.ok(["sync", "setup", folder.path, "--name", "b"])
    for round in 0..<3 {
      for index in 0..<20 { try a.ok(["add", "task \(round) \(index)", "--notes", "-"], input: "note \(index)") }
      let first = try Binary.tasker.start(["sync", "now"], environment: a.environment)
      let second = try Binary.tasker.start(["sync", "now"], environment: a.environment)
      for (name, result) in [("first", try first.finish()), ("second", try second.finish())] {
        #expect(result.status == 0, "\(name): \(result.stderr)")
      }
      try b.ok(["sync", "now"])
      let titles = try b.taskTitles()
      #expect(titles.count == 20 * (round + 1) && Set(titles).count == titles.count, "each task once: \(titles)")
    }
    let objects = try FileManager.default.contentsOfDirectory(
      atPath: folder.path + "/tasker-sync/d/" + (try a.syncDeviceID()))
    #expect(objects.count == 4, "the first object and one per round: \(objects.sorted())")
  }
}
