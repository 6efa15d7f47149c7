import Foundation
import TaskerTestSupport
import Testing

/// A pull that spans several of the engine's applying batches (about
/// 2 MiB of objects each, `SyncEngine.batchBytes`), end to end through a
/// folder: each object is still applied whole or not at all, whichever
/// batch it falls in.
@Suite("Sync: a pull in several batches keeps every object whole")
struct SyncBatchTests {
  /// Device A's first sync of `count` tasks with notes of about 200 KiB:
  /// objects of about 1 MiB each (a payload is cut near 1 MiB).
  private static func deviceWithLargeNotes(count: Int, in folder: TemporaryDirectory) throws -> TestDevice {
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    for index in 0..<count {
      try a.ok(["add", "task \(index)", "--notes", "-"], input: note(index))
    }
    try a.ok(["sync", "now"])
    return a
  }

  private static func note(_ index: Int) -> String {
    String(repeating: "note \(index) of a pull in batches. ", count: 6_000)
  }

  @Test func aRefusedObjectInALaterBatchKeepsTheObjectsBeforeItAndHoldsBackThoseAfter() throws {
    let folder = try TemporaryDirectory()
    let a = try Self.deviceWithLargeNotes(count: 24, in: folder)
    let aID = try a.syncDeviceID()
    let root = folder.path + "/tasker-sync/d/" + aID + "/"
    let seqs = try FileManager.default.contentsOfDirectory(atPath: root).compactMap { Int($0, radix: 16) }.sorted()
    // The batches as the reader cuts them: objects in order until a batch holds 2 MiB or more.
    var batches: [[Int]] = [[]]
    var bytes = 0
    for seq in seqs {
      if bytes >= 2 << 20 { (batches, bytes) = (batches + [[]], 0) }
      batches[batches.count - 1].append(seq)
      bytes += try fileBytes(root + seqName(seq)).count
    }
    // The object refused is the second of the second batch: one object of its batch before it, one after.
    try #require(batches.count >= 2 && batches[1].count >= 3, "batches: \(batches)")
    let target = batches[1][1]
    let path = root + seqName(target)
    let original = try fileBytes(path)
    var altered = original
    altered[altered.count / 2] ^= 0x01
    try Data(altered).write(to: URL(fileURLWithPath: path))

    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b", sync: false)
    let refused = try b.tasker(["sync", "now", "--json"])
    #expect(refused.status == 61, "\(refused.stderr)")
    let report = try #require(try refused.json() as? [String: Any])
    let reasons = (report["refused"] as? [[String: Any]] ?? []).map {
      "\($0["device"] as? String ?? "?") \($0["seq"] as? Int ?? -1) \($0["reason"] as? String ?? "?")"
    }
    #expect(reasons == ["\(aID) \(target) authentication_failed"])
    let applied = (report["applied"] as? [[String: Any]] ?? []).first { $0["device"] as? String == aID }
    #expect(applied?["objects"] as? Int == target - 1)
    // B holds exactly what the objects before it carry: every note whole, none of it or later.
    let status = try b.json(["sync", "status", "--json"])
    let seen = (status["devices"] as? [[String: Any]] ?? []).first { $0["id"] as? String == aID }
    #expect(seen?["last_seq"] as? Int == target - 1)
    let partial = try b.taskTitles()
    #expect(!partial.isEmpty && partial.count < 24, "\(partial.count) tasks")
    for title in partial {
      let index = try #require(Int(title.dropFirst("task ".count)))
      #expect(try b.json(["show", try b.taskID(title), "--json"])["notes"] as? String == Self.note(index))
    }

    try Data(original).write(to: URL(fileURLWithPath: path))
    let repaired = try b.tasker(["sync", "now", "--json"])
    #expect(repaired.status == 0, "\(repaired.stderr)")
    #expect(try b.taskTitles().sorted() == (0..<24).map { "task \($0)" }.sorted())
    #expect(try b.syncContent() == a.syncContent())
  }

  @Test func aMissingObjectInALaterBatchStopsThePullThereAndTheNextSyncCarriesOn() throws {
    let folder = try TemporaryDirectory()
    let a = try Self.deviceWithLargeNotes(count: 24, in: folder)
    let aID = try a.syncDeviceID()
    let root = folder.path + "/tasker-sync/d/" + aID + "/"
    let path = root + seqName(5)
    let original = try fileBytes(path)
    try FileManager.default.removeItem(atPath: path)

    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b", sync: false)
    let held = try b.tasker(["sync", "now", "--json"])
    #expect(held.status == 61, "\(held.stderr)")
    let status = try b.json(["sync", "status", "--json"])
    let seen = (status["devices"] as? [[String: Any]] ?? []).first { $0["id"] as? String == aID }
    #expect(seen?["last_seq"] as? Int == 4)

    try Data(original).write(to: URL(fileURLWithPath: path))
    let resumed = try b.tasker(["sync", "now"])
    #expect(resumed.status == 0, "\(resumed.stderr)")
    #expect(try b.syncContent() == a.syncContent())
  }
}
