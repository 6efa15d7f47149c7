import Foundation
import TaskerTestSupport
import Testing

/// Compaction end to end through a folder (docs/formats/sync-storage.md,
/// *Compaction*): acknowledgements without ping-pong, a fold, pruning only
/// what every known device has applied, and a device set up later reading
/// past the fold to the same state.
@Suite("Sync compaction: acknowledgements, folds, pruning only what every device has")
struct SyncCompactionTests {
  func sync(_ device: TestDevice, compact: Bool = false) throws -> [String: Any] {
    try device.json(["sync", compact ? "compact" : "now", "--json"])
  }

  /// The seqs of `device`'s objects at the storage.
  func seqs(_ folder: String, _ device: TestDevice) throws -> [Int] {
    let path = folder + "/tasker-sync/d/" + (try device.syncDeviceID())
    return try FileManager.default.contentsOfDirectory(atPath: path).compactMap { Int($0, radix: 16) }.sorted()
  }

  @Test func aFoldIsPrunedOnlyAsFarAsEveryDeviceHasReadAndALateDeviceReadsPastIt() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    let b = try TestDevice(passphrase: "device b")
    let c = try TestDevice(passphrase: "device c")
    try a.ok(["sync", "now"])
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    try c.syncJoin(keysFrom: a, folder: folder.path, name: "c")
    for index in 1...6 {
      try a.ok(["add", "task \(index)", "--notes", "-"], input: "note \(index)")
      try a.ok(["sync", "now"])
    }
    try a.ok(["page", "new", "Journal", "--body", "-"], input: "page body")
    try a.ok(["delete", try a.taskID("task 2")])
    try a.ok(["sync", "now"])

    // B and C apply A's records and, having nothing to send, acknowledge them once: no ping-pong.
    #expect(try sync(b)["uploaded"] as? Int == 1)
    #expect(try sync(c)["uploaded"] as? Int == 1)
    #expect(try sync(b)["uploaded"] as? Int == 0)
    #expect(try sync(a)["uploaded"] as? Int == 0, "an acknowledgement is not acknowledged")
    let before = try seqs(folder.path, a)

    // C falls silent; A writes more, then compacts: only what C has acknowledged may go.
    try a.ok(["edit", try a.taskID("task 1"), "--priority", "high"])
    try a.ok(["sync", "now"])
    #expect(try sync(b)["uploaded"] as? Int == 1)
    let compacted = try sync(a, compact: true)
    let compaction = try #require(compacted["compaction"] as? [String: Any])
    let floor = try #require(compaction["floor"] as? Int)
    #expect(compaction["folded"] as? Int ?? 0 >= 1 && floor == before.last! + 1, "\(compacted)")
    let after = try seqs(folder.path, a)
    #expect(compaction["removed"] as? Int == before.count, "what C had acknowledged: \(before) -> \(after)")
    #expect(after.first == floor, "A's change C has not read stays: \(after)")
    #expect(after.allSatisfy { $0 >= floor })

    // C comes back, reads A's change and the fold (idempotent), and acknowledges; A removes the rest.
    try c.ok(["sync", "now"])
    let cleaned = try sync(a, compact: false)
    #expect((cleaned["compaction"] as? [String: Any])?["removed"] as? Int == 1, "\(cleaned)")
    #expect(try seqs(folder.path, a).allSatisfy { $0 > floor })

    // A device set up now reads past the fold to the same state; the others are unchanged.
    let d = try TestDevice(passphrase: "device d")
    try d.importKeys(from: a)
    try d.syncSetUp(folder.path, name: "d")
    let first = try sync(d)
    #expect(first["read_past_folds"] as? Int ?? 0 > 0 && (first["refused"] as? [Any])?.isEmpty == true, "\(first)")
    try syncRounds([a, b, c, d], orders: [[0, 1, 2, 3], [3, 2, 1, 0]])
    let expected = try a.syncContent()
    for (index, device) in [b, c, d].enumerated() {
      #expect(try device.syncContent() == expected, "device \(index) differs")
      #expect((try device.json(["conflicts", "--json"])["conflicts"] as? [Any])?.isEmpty == true)
    }
    #expect(try d.taskTitles().sorted() == ["task 1", "task 3", "task 4", "task 5", "task 6"])
    #expect(try d.json(["show", try d.taskID("task 1"), "--json"])["priority"] as? String == "high")
  }

  @Test func aGapNoFoldHoldsIsStillReported() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    for index in 1...3 {
      try a.ok(["add", "task \(index)"])
      try a.ok(["sync", "now"])
    }
    // The storage drops A's second object; A never folded, so nothing may be read past it.
    let device = try a.syncDeviceID()
    try FileManager.default.removeItem(atPath: folder.path + "/tasker-sync/d/\(device)/" + String(format: "%016x", 2))
    let b = try TestDevice(passphrase: "device b")
    try b.importKeys(from: a)
    try b.syncSetUp(folder.path, name: "b")
    let result = try b.tasker(["sync", "now", "--json"])
    #expect(result.status == 61, "\(result.stderr)")
    #expect(try b.taskTitles() == ["task 1"], "only what came before the gap")
  }
}
