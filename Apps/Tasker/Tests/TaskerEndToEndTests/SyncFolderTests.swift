import Foundation
import TaskerTestSupport
import Testing

/// Layer-1 sync through a folder, end to end with the real binaries
/// (docs/formats/sync-storage.md): devices converge, the storage reads
/// nothing, and whatever the storage does to the objects is refused whole.
@Suite("Sync through a folder: convergence, a blind storage, adversarial storage, setup errors")
struct SyncFolderTests {
  // MARK: - 1. Convergence

  @Test func threeDevicesConvergeThroughOneFolder() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    try a.ok(["add", "alpha", "--notes", "-"], input: "alpha note")
    try a.ok(["add", "beta", "--notes", "-", "--contexts", "@home"], input: "beta note")
    try a.ok(["add", "gamma"])
    try a.ok(["page", "new", "Journal", "--body", "-"], input: "page body")
    try a.ok(["sync", "now"])
    let b = try TestDevice(passphrase: "device b")
    let c = try TestDevice(passphrase: "device c")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    try c.syncJoin(keysFrom: a, folder: folder.path, name: "c")
    let devices = [a, b, c]
    try syncRounds(devices, orders: [[1, 2, 0]])
    for device in devices { #expect(try device.syncContent() == a.syncContent()) }

    // Concurrent edits, none of them seen by the others yet.
    try a.ok(["edit", try a.taskID("alpha"), "--priority", "high"])
    try b.ok(["edit", try b.taskID("alpha"), "--due", "2030-01-02"])
    try a.ok(["edit", try a.taskID("beta"), "--notes", "-"], input: "beta from A")
    try c.ok(["edit", try c.taskID("beta"), "--notes", "-"], input: "beta from C")
    try b.ok(["delete", try b.taskID("gamma")])
    try c.ok(["edit", try c.taskID("gamma"), "--title", "gamma renamed", "--priority", "low"])
    try b.ok(["page", "edit", try b.pageID("Journal"), "--body", "-"], input: "page body v2")
    try syncRounds(devices, orders: [[0, 1, 2], [2, 0, 1], [1, 2, 0]])

    // The note conflict is on every device with both texts.
    for (index, device) in devices.enumerated() {
      let conflicts = try #require(try device.json(["conflicts", "--json"])["conflicts"] as? [[String: Any]])
      #expect(conflicts.count == 1, "device \(index): \(conflicts)")
      let texts = (conflicts.first?["texts"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
      #expect(conflicts.first?["kind"] as? String == "task" && conflicts.first?["title"] as? String == "beta")
      #expect(texts.count == 2 && texts.contains("beta from A") && texts.contains("beta from C"), "\(texts)")
    }
    let onB = try #require(try b.json(["conflicts", "--json"])["conflicts"] as? [[String: Any]])
    let kept = try #require((onB.first?["texts"] as? [[String: Any]])?.last?["text"] as? String)
    try b.ok(["resolve", "task", try b.taskID("beta"), "--keep", "2"])
    try syncRounds(devices, orders: [[1, 0, 2], [2, 1, 0], [0, 2, 1]])

    let expected = try a.syncContent()
    for (index, device) in devices.enumerated() {
      #expect(try device.syncContent() == expected, "device \(index) differs")
      #expect((try device.json(["conflicts", "--json"])["conflicts"] as? [Any])?.isEmpty == true, "device \(index)")
      let alpha = try device.json(["show", try device.taskID("alpha"), "--json"])
      #expect(alpha["priority"] as? String == "high" && alpha["due"] as? String == "2030-01-02", "\(alpha)")
      #expect(alpha["notes"] as? String == "alpha note")
      #expect(try device.json(["show", try device.taskID("beta"), "--json"])["notes"] as? String == kept)
      let titles = try device.taskTitles()
      #expect(titles.sorted() == ["alpha", "beta"], "delete wins on device \(index): \(titles)")
      let page = try device.json(["page", "show", try device.pageID("Journal"), "--json"])
      #expect(page["body"] as? String == "page body v2")
      #expect(try device.ok(["page", "show", try device.pageID("Journal")]).stdoutText.hasSuffix("\npage body v2\n"))
    }
  }

  // MARK: - 2. A blind storage

  @Test func theStorageHoldsNoCanaryAndOnlyPaddedSizes() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    let canaries = ["CANARYTITLE7a1f", "CANARYNOTE93be", "CANARYCONTEXT5c2d", "CANARYPAGETITLE44", "CANARYPAGEBODY0e"]
    try a.ok(["add", "x \(canaries[0]) y", "--notes", "-", "--contexts", "@\(canaries[2])"], input: "n \(canaries[1])")
    try a.ok(["page", "new", canaries[3], "--body", "-"], input: String(repeating: canaries[4] + " ", count: 300))
    try a.ok(["sync", "now"])
    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    try b.ok(["edit", try b.taskID("x \(canaries[0]) y"), "--notes", "-"], input: "again \(canaries[1])")
    try syncRounds([a, b], orders: [[1, 0]])
    #expect(
      try a.json(["show", try a.taskID("x \(canaries[0]) y"), "--json"])["notes"] as? String
        == "again \(canaries[1])")

    let files = try storageFiles(folder.path)
    var objects = 0
    for (name, bytes) in files {
      for canary in canaries {
        #expect(
          !name.contains(canary) && !(bytes ?? []).containsBytes(Array(canary.utf8)), "\(canary) readable in \(name)")
      }
      guard let bytes, name.contains("tasker-sync/d/") else { continue }
      objects += 1
      #expect(bytes.count >= 574 && padme(bytes.count - 62) == bytes.count - 62, "\(name): \(bytes.count) bytes")
    }
    #expect(objects >= 2)
    #expect(files["tasker-sync/target"]??.count == 54)
  }

  // MARK: - 3. Adversarial storage

  @Test func aFlippedByteIsRefusedAsAuthenticationFailed() throws {
    let pair = try SyncPair()
    let (path, seq) = try pair.newObjectFromA("second")
    let original = try fileBytes(path)
    var altered = original
    altered[200] ^= 0x01
    try write(altered, path)
    // The text form names the object on standard error.
    let before = try pair.b.syncSnapshot()
    let refused = try pair.b.tasker(["sync", "now"])
    #expect(refused.status == 61)
    #expect(refused.stderr.contains("refused object \(seq) of device \(pair.aID): authentication_failed"))
    #expect(try pair.b.syncSnapshot() == before)
    try pair.expectRefusedThenRepaired(seq: seq, reason: "authentication_failed", repair: { try write(original, path) })
  }

  @Test func swappedPositionsAreRefusedAsWrongPosition() throws {
    let pair = try SyncPair(firstSyncOfB: false)
    _ = try pair.newObjectFromA("second")
    let one = pair.objectPath(pair.aID, 1)
    let two = pair.objectPath(pair.aID, 2)
    let (first, second) = (try fileBytes(one), try fileBytes(two))
    try write(second, one)
    try write(first, two)
    try pair.expectRefusedThenRepaired(
      seq: 1, reason: "wrong_position", titles: ["first", "second"],
      repair: {
        try write(first, one)
        try write(second, two)
      })
  }

  @Test func anObjectCopiedToAnotherDevicesFolderIsRefused() throws {
    let pair = try SyncPair()
    let (path, _) = try pair.newObjectFromA("second")
    let original = try fileBytes(path)
    // The storage withholds A's object and shows it under another device.
    let other = String(repeating: "ab", count: 16)
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.createDirectory(
      atPath: pair.root + "/d/" + other, withIntermediateDirectories: true)
    try write(original, pair.objectPath(other, 1))
    try pair.expectRefusedThenRepaired(
      device: other, seq: 1, reason: "wrong_position",
      repair: {
        try FileManager.default.removeItem(atPath: pair.root + "/d/" + other)
        try write(original, path)
      })
  }

  @Test func aGapInASequenceHoldsBackTheObjectsAfterIt() throws {
    let pair = try SyncPair()
    let (second, seq) = try pair.newObjectFromA("second")
    let (third, _) = try pair.newObjectFromA("third")
    let original = try fileBytes(second)
    try FileManager.default.removeItem(atPath: second)
    try pair.expectRefusedThenRepaired(
      seq: seq, reason: "missing", titles: ["first", "second", "third"], repair: { try write(original, second) })
    #expect(FileManager.default.fileExists(atPath: third))
  }

  @Test func anObjectFromAnotherTargetIsRefused() throws {
    let pair = try SyncPair()
    // Device D holds the same keys and syncs with a second folder.
    let otherFolder = try TemporaryDirectory()
    let d = try TestDevice(passphrase: "device d")
    try d.syncJoin(keysFrom: pair.a, folder: otherFolder.path, name: "a")
    try d.ok(["add", "foreign"])
    try d.ok(["sync", "now"])
    let dID = try d.syncDeviceID()
    let foreign = try fileBytes(otherFolder.path + "/tasker-sync/d/\(dID)/" + seqName(1))
    try FileManager.default.createDirectory(atPath: pair.root + "/d/" + dID, withIntermediateDirectories: true)
    try write(foreign, pair.objectPath(dID, 1))
    try pair.expectRefusedThenRepaired(
      device: dID, seq: 1, reason: "authentication_failed", titles: ["first"],
      repair: { try FileManager.default.removeItem(atPath: pair.root + "/d/" + dID) })
  }

  @Test func aReplayedObjectIsRefusedAndNeverAppliedTwice() throws {
    let pair = try SyncPair()
    let (_, seq) = try pair.newObjectFromA("second")
    try pair.b.ok(["sync", "now"])
    #expect(try pair.b.taskTitles().sorted() == ["first", "second"])
    let replay = pair.objectPath(pair.aID, Int(seq) + 1)
    try write(try fileBytes(pair.objectPath(pair.aID, 1)), replay)
    try pair.expectRefusedThenRepaired(
      seq: seq + 1, reason: "wrong_position", titles: ["first", "second"],
      repair: { try FileManager.default.removeItem(atPath: replay) })
    #expect(try pair.b.taskTitles().filter { $0 == "first" }.count == 1)
  }

  @Test func aMarkerMadeUnderAnotherKeyStopsEverything() throws {
    let pair = try SyncPair()
    _ = try pair.newObjectFromA("second")
    let stranger = try TestDevice(passphrase: "stranger")
    let strangerFolder = try TemporaryDirectory()
    try stranger.syncSetUp(strangerFolder.path, name: "s")
    let marker = pair.root + "/target"
    let original = try fileBytes(marker)
    try write(try fileBytes(strangerFolder.path + "/tasker-sync/target"), marker)
    try pair.b.ok(["add", "local"])
    let storageBefore = try storageFiles(pair.folder.path)
    let before = try pair.b.syncSnapshot()
    let refused = try pair.b.tasker(["sync", "now"])
    #expect(refused.status == 61, "\(refused.stderr)")
    #expect(refused.stderr.contains("not_this_key"), "\(refused.stderr)")
    #expect(try storageFiles(pair.folder.path) == storageBefore, "nothing written")
    #expect(try pair.b.syncSnapshot() == before, "nothing read")
    try write(original, marker)
    try pair.b.ok(["sync", "now"])
    #expect(try pair.b.taskTitles().sorted() == ["first", "local", "second"])
  }

  @Test func aSymlinkedObjectFolderIsRefused() throws {
    let pair = try SyncPair()
    _ = try pair.newObjectFromA("second")
    let elsewhere = try TemporaryDirectory()
    let objects = pair.root + "/d"
    try FileManager.default.moveItem(atPath: objects, toPath: pair.root + "/d.real")
    try FileManager.default.copyItem(atPath: pair.root + "/d.real", toPath: elsewhere.path("d"))
    try FileManager.default.createSymbolicLink(atPath: objects, withDestinationPath: elsewhere.path("d"))
    try pair.b.ok(["add", "local"])
    let linkedBefore = try storageFiles(elsewhere.path)
    let listBefore = try pair.b.ok(["list", "--all", "--json"]).stdoutText
    let refused = try pair.b.tasker(["sync", "now"])
    #expect(refused.status == 77, "\(refused.stderr)")
    #expect(refused.stderr.contains("symlink"), "\(refused.stderr)")
    #expect(try storageFiles(elsewhere.path) == linkedBefore, "nothing written through the link")
    #expect(try pair.b.ok(["list", "--all", "--json"]).stdoutText == listBefore)
    #expect(unlink(objects) == 0)
    try FileManager.default.moveItem(atPath: pair.root + "/d.real", toPath: objects)
    try pair.b.ok(["sync", "now"])
    #expect(try pair.b.taskTitles().sorted() == ["first", "local", "second"])
    try pair.a.ok(["sync", "now"])
    #expect(try pair.a.taskTitles().sorted() == ["first", "local", "second"])
  }

  @Test func aTruncatedObjectIsRefused() throws {
    let pair = try SyncPair()
    let (path, seq) = try pair.newObjectFromA("second")
    let original = try fileBytes(path)
    try write(Array(original.prefix(100)), path)
    try pair.expectRefusedThenRepaired(seq: seq, reason: "truncated", repair: { try write(original, path) })
  }

  // MARK: - 4. Off by default, setup errors

  @Test func syncIsOffByDefaultAndSetupErrorsHaveTheirCodes() throws {
    let a = try TestDevice(passphrase: "device a")
    let folder = try TemporaryDirectory()
    try a.ok(["add", "one"])
    let outsideBefore = try storageFiles(a.root.path).keys.filter { !$0.hasPrefix("tasker/") && !$0.hasPrefix("keys/") }
    for arguments in [["sync", "now"], ["sync", "status"], ["sync", "status", "--json"], ["sync", "now", "--json"]] {
      let result = try a.tasker(arguments)
      #expect(result.status == 62, "\(arguments): \(result.stderr)")
    }
    let outsideAfter = try storageFiles(a.root.path).keys.filter { !$0.hasPrefix("tasker/") && !$0.hasPrefix("keys/") }
    #expect(outsideAfter.sorted() == outsideBefore.sorted())
    #expect(try storageFiles(folder.path).isEmpty)

    #expect(try a.tasker(["sync", "setup", folder.path("missing"), "--name", "a"]).status == 66)
    #expect(!FileManager.default.fileExists(atPath: folder.path("missing")))
    try a.syncSetUp(folder.path, name: "a")
    let second = try a.tasker(["sync", "setup", folder.path, "--name", "again"])
    #expect(second.status == 73, "\(second.stderr)")
    try a.ok(["sync", "now"])
    let storage = try storageFiles(folder.path)
    #expect(storage.keys.contains { $0.hasPrefix("tasker-sync/d/") && storage[$0]! != nil })
    try a.ok(["sync", "off"])
    #expect(try a.tasker(["sync", "now"]).status == 62)
    #expect(try a.tasker(["sync", "status"]).status == 62)
    #expect(try storageFiles(folder.path) == storage, "sync off leaves the storage as it is")
  }

  /// A device without the sync key cannot join a storage another device set
  /// up: it makes no second key, writes nothing, and the hint says how to
  /// bring the keys.
  @Test
  func aDeviceWithoutTheSyncKeyCannotJoinAndWritesNoObject() throws {
    let a = try TestDevice(passphrase: "device a")
    let folder = try TemporaryDirectory()
    try a.syncSetUp(folder.path, name: "a")
    try a.ok(["add", "one"])
    try a.ok(["sync", "now"])
    let storage = try storageFiles(folder.path)
    let stranger = try TestDevice(passphrase: "stranger")
    let refused = try stranger.tasker(["sync", "setup", folder.path, "--name", "s"])
    #expect(refused.status != 0, "\(refused.status)")
    #expect(refused.stderr.contains("taskkey pair") || refused.stderr.contains("--from-bundle"), "\(refused.stderr)")
    #expect(try storageFiles(folder.path) == storage, "no object, no marker written")
    #expect(try stranger.tasker(["sync", "now"]).status == 62)
  }

  // MARK: - 5. A database writer cannot redirect sync

  @Test func aDatabaseWriterCannotRedirectOrOverwriteTheStorage() throws {
    let pair = try SyncPair()
    let decoy = try TemporaryDirectory()
    let status = try pair.a.json(["sync", "status", "--json"])
    let listed = try pair.a.ok(["list", "--all", "--json"]).stdoutText
    let edited = try pair.a.sqlite(
      """
      DELETE FROM sync_values; DELETE FROM sync_devices;
      INSERT INTO sync_values (name, value) VALUES ('folder', '\(decoy.path)'), ('target', '\(decoy.path)');
      INSERT INTO sync_devices (device, name, last_seq) VALUES ('\(String(repeating: "cd", count: 16))', 'evil', 9);
      """)
    #expect(edited.status == 0, "\(edited.stderr)")
    let storage = try storageFiles(pair.folder.path)
    try pair.a.ok(["sync", "now"])
    let after = try pair.a.json(["sync", "status", "--json"])
    for key in ["kind", "target", "target_id", "device"] {
      #expect(after[key] as? String == status[key] as? String, "\(key)")
    }
    #expect(try storageFiles(decoy.path).isEmpty, "nothing at the decoy")
    #expect(try storageFiles(pair.folder.path) == storage)
    #expect(try pair.a.ok(["list", "--all", "--json"]).stdoutText == listed, "re-reading B's objects changes nothing")

    let objectOne = pair.objectPath(pair.aID, 1)
    let original = try fileBytes(objectOne)
    let inserted = try pair.a.sqlite("INSERT INTO sync_outbox (seq, object) VALUES (1, randomblob(700));")
    #expect(inserted.status == 0, "\(inserted.stderr)")
    let refused = try pair.a.tasker(["sync", "now"])
    #expect(refused.status == 61, "\(refused.stderr)")
    #expect(refused.stderr.contains("already holds object 1"), "\(refused.stderr)")
    #expect(try fileBytes(objectOne) == original, "the storage's object is never replaced")
    #expect(try storageFiles(decoy.path).isEmpty)
  }
}

// MARK: - Helpers

/// Two devices A and B sharing one folder: A set up with a task "first"
/// synced, B joined with A's keys and (by default) synced once.
private struct SyncPair {
  let folder: TemporaryDirectory
  let a: TestDevice
  let b: TestDevice
  let aID: String

  init(firstSyncOfB: Bool = true) throws {
    folder = try TemporaryDirectory()
    a = try TestDevice(passphrase: "device a")
    b = try TestDevice(passphrase: "device b")
    try a.syncSetUp(folder.path, name: "a")
    try a.ok(["add", "first", "--notes", "-"], input: "first note")
    try a.ok(["sync", "now"])
    aID = try a.syncDeviceID()
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b", sync: firstSyncOfB)
    if firstSyncOfB { try a.ok(["sync", "now"]) }
  }

  var root: String { folder.path + "/tasker-sync" }
  func objectPath(_ device: String, _ seq: Int) -> String { root + "/d/" + device + "/" + seqName(seq) }

  /// A adds a task and syncs: the path and seq of its newest object.
  func newObjectFromA(_ title: String) throws -> (String, UInt64) {
    try a.ok(["add", title, "--notes", "-"], input: "\(title) note")
    try a.ok(["sync", "now"])
    let names = try FileManager.default.contentsOfDirectory(atPath: root + "/d/" + aID)
    let seq = try #require(names.compactMap { UInt64($0, radix: 16) }.max())
    return (objectPath(aID, Int(seq)), seq)
  }

  /// B's sync exits 61 naming the object, B's database is as before; after
  /// `repair` B's sync exits 0 and B lists `titles`.
  func expectRefusedThenRepaired(
    device: String? = nil, seq: UInt64, reason: String, titles: [String] = ["first", "second"],
    repair: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let device = device ?? aID
    let before = try b.syncSnapshot()
    let result = try b.tasker(["sync", "now", "--json"])
    #expect(result.status == 61, "\(result.stderr)", sourceLocation: sourceLocation)
    let refused = (try? result.json() as? [String: Any])?["refused"] as? [[String: Any]] ?? []
    #expect(
      refused.contains {
        $0["device"] as? String == device && ($0["seq"] as? Int).map(UInt64.init) == seq
          && ($0["reason"] as? String)?.contains(reason) == true
      }, "refused: \(refused), stderr: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(try b.syncSnapshot() == before, "nothing of the object applied", sourceLocation: sourceLocation)
    try repair()
    let repaired = try b.tasker(["sync", "now", "--json"])
    #expect(repaired.status == 0, "\(repaired.stderr) \(repaired.stdoutText)", sourceLocation: sourceLocation)
    #expect(try b.taskTitles().sorted() == titles.sorted(), sourceLocation: sourceLocation)
    #expect(try b.json(["show", try b.taskID("first"), "--json"])["notes"] as? String == "first note")
  }
}

/// Padmé (the format's `pad`).
private func padme(_ length: Int) -> Int {
  let e = Int.bitWidth - 1 - length.leadingZeroBitCount
  let s = Int.bitWidth - 1 - e.leadingZeroBitCount + 1
  let mask = (1 << (e - s)) - 1
  return (length + mask) & ~mask
}

private func write(_ bytes: [UInt8], _ path: String) throws {
  try Data(bytes).write(to: URL(fileURLWithPath: path))
}
