import Foundation
import TaskerTestSupport
import Testing

/// A folder target's temporaries (docs/formats/sync-storage.md, *Layout
/// at the storage*): a write killed between writing `t/<device>-<32 hex>`
/// and linking it leaves the temporary; that device's next sync removes
/// it, and no other name.
@Suite("Sync through a folder: a device removes its own stale temporaries, never another's")
struct SyncTemporaryTests {
  @Test func aSyncRemovesItsOwnStaleTemporariesAndNoOtherName() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    let b = try TestDevice(passphrase: "device b")
    try a.syncSetUp(folder.path, name: "a")
    try a.ok(["sync", "now"])
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    let (aID, bID) = (try a.syncDeviceID(), try b.syncDeviceID())
    let temporaries = folder.path + "/tasker-sync/t/"
    let hex = String(repeating: "5e", count: 16)
    let aStale = aID + "-" + hex
    let bStale = bID + "-" + hex
    // Names that are not A's temporaries: another device's, a marker's, a directory, other spellings.
    let kept = [
      bStale, hex, aID + "-" + "5e5e", aID + "-" + hex + "0", aID.uppercased() + "-" + hex,
      aID + "-" + hex.uppercased(), aID + hex,
    ]
    for name in [aStale] + kept {
      try Data("half an object".utf8).write(to: URL(fileURLWithPath: temporaries + name))
    }
    let aDirectory = aID + "-" + String(repeating: "d1", count: 16)
    try FileManager.default.createDirectory(atPath: temporaries + aDirectory, withIntermediateDirectories: false)
    let objects = try storageFiles(folder.path + "/tasker-sync").filter { $0.key.hasPrefix("d/") }

    try a.ok(["add", "after the crash"])
    try a.ok(["sync", "now"])
    let left = Set(try FileManager.default.contentsOfDirectory(atPath: temporaries))
    #expect(left == Set(kept + [aDirectory]), "only A's stale temporary is gone: \(left.sorted())")
    let now = try storageFiles(folder.path + "/tasker-sync").filter { $0.key.hasPrefix("d/") }
    #expect(objects.allSatisfy { now[$0.key] == $0.value }, "no object changed")
    let ofA = { (files: [String: [UInt8]?]) in files.keys.filter { $0.hasPrefix("d/\(aID)/") }.count }
    #expect(ofA(now) == ofA(objects) + 1, "A's new object is there: \(now.keys.sorted())")

    // B's own sync removes B's.
    try b.ok(["sync", "now"])
    #expect(try b.taskTitles() == ["after the crash"])
    let leftAfterB = Set(try FileManager.default.contentsOfDirectory(atPath: temporaries))
    #expect(leftAfterB == Set(kept + [aDirectory]).subtracting([bStale]), "\(leftAfterB.sorted())")
  }
}
