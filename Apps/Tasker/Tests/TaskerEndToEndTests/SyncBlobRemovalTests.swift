import Foundation
import TaskerTestSupport
import Testing

/// The blobs of deleted attachments leave the storage
/// (docs/formats/sync-storage.md, *Compaction*, step 5): only the device
/// that wrote a blob removes it, and only once every device it knows has
/// acknowledged the object that carries the deletion, whichever device
/// deleted it; a removal that fails does not fail the sync.
@Suite("Sync of attachments: a deleted attachment's blob leaves once every device has the deletion")
struct SyncBlobRemovalTests {
  /// The names of `device`'s blobs at the storage.
  func blobs(_ devices: ThreeDevices, of device: TestDevice) throws -> Set<String> {
    let folder = devices.root + "/a/" + (try device.syncDeviceID())
    return Set((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
  }

  func attachmentNames(_ device: TestDevice) throws -> [String] {
    let listed = try device.json(["attach", "list", "--json"])["attachments"] as? [[String: Any]] ?? []
    return listed.compactMap { $0["name"] as? String }.sorted()
  }

  func attachmentID(_ device: TestDevice, _ name: String) throws -> String {
    let listed = try device.json(["attach", "list", "--json"])["attachments"] as? [[String: Any]] ?? []
    return try #require(listed.first { $0["name"] as? String == name }?["id"] as? String)
  }

  /// Runs `sync now --json` on `device` (exit 0, nothing refused) and
  /// returns how many blobs it removed.
  func syncRemovingBlobs(_ device: TestDevice, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int? {
    let report = try device.json(["sync", "now", "--json"])
    #expect((report["refused"] as? [Any])?.isEmpty == true, "\(report)", sourceLocation: sourceLocation)
    return (report["compaction"] as? [String: Any])?["blobs_removed"] as? Int
  }

  /// Three devices that all have A's attachment `name` and have
  /// acknowledged it, and A's blobs at the storage.
  func threeDevices(sharing name: String) throws -> (ThreeDevices, Set<String>) {
    let devices = try ThreeDevices()
    try devices.a.attach("content of \(name)", named: name, toTask: "before removal")
    try devices.a.ok(["sync", "now"])
    try syncRounds([devices.a, devices.b, devices.c], orders: [[1, 2, 0]])
    return (devices, try blobs(devices, of: devices.a))
  }

  @Test func aBlobLeavesOnlyOnceEveryDeviceHasTheDeletionAndOnlyByItsWriter() throws {
    let devices = try ThreeDevices()
    let (a, b, c) = (devices.a, devices.b, devices.c)
    for name in ["first.bin", "second.bin"] {
      try a.attach("content of \(name)", named: name, toTask: "before removal")
    }
    try a.ok(["sync", "now"])
    let written = try blobs(devices, of: a)
    #expect(written.count == 2, "\(written)")
    // Everyone has both records (and acknowledges them); C never fetches either.
    try syncRounds([a, b, c], orders: [[1, 2, 0], [1, 2, 0]])
    #expect(try attachmentNames(c) == ["first.bin", "second.bin"])
    let stateOfFirst = try a.sqlite(
      "SELECT state FROM sync_records WHERE kind = 'attachment' AND local_id = \(try attachmentID(a, "first.bin"));")
    let first = try #require(written.first { stateOfFirst.stdoutText.contains($0) })
    let second = try #require(written.first { $0 != first })

    // A removes first.bin: its blob stays until B and C have acknowledged the deletion.
    try a.ok(["attach", "remove", try attachmentID(a, "first.bin")])
    #expect(try syncRemovingBlobs(a) == 0)
    #expect(try syncRemovingBlobs(b) == 0)
    #expect(try syncRemovingBlobs(a) == 0)
    #expect(try blobs(devices, of: a) == written, "C has not read the deletion yet")
    // C, which never fetched it, pulls the deletion and shows no such attachment; then A removes the blob.
    #expect(try syncRemovingBlobs(c) == 0)
    #expect(try attachmentNames(c) == ["second.bin"])
    #expect(try syncRemovingBlobs(a) == 1)
    #expect(try blobs(devices, of: a) == [second])

    // B removes second.bin, A's blob: B never removes it; A does once C has B's deletion too.
    try b.ok(["attach", "remove", try attachmentID(b, "second.bin")])
    #expect(try syncRemovingBlobs(b) == 0)
    #expect(try syncRemovingBlobs(a) == 0, "C has not read B's deletion")
    #expect(try syncRemovingBlobs(b) == 0)
    #expect(try blobs(devices, of: a) == [second])
    #expect(try syncRemovingBlobs(c) == 0)
    #expect(try attachmentNames(c).isEmpty)

    // A removal that fails (the folder is now a symlink, refused) leaves the blob and the sync succeeds;
    // the next sync removes it.
    let folder = devices.root + "/a/" + (try a.syncDeviceID())
    let moved = devices.folder.path + "/moved"
    try FileManager.default.moveItem(atPath: folder, toPath: moved)
    try FileManager.default.createSymbolicLink(atPath: folder, withDestinationPath: moved)
    #expect(try syncRemovingBlobs(a) == 0)
    #expect(FileManager.default.fileExists(atPath: moved + "/" + second))
    try FileManager.default.removeItem(atPath: folder)
    try FileManager.default.moveItem(atPath: moved, toPath: folder)
    #expect(try syncRemovingBlobs(a) == 1)
    #expect(try blobs(devices, of: a).isEmpty)
    #expect(try syncRemovingBlobs(a) == 0, "nothing is removed twice")
    for device in [a, b, c] { #expect(try attachmentNames(device).isEmpty) }
  }

  @Test func aBlobDeletedBeforeBlobRemovalExistedIsNotedOnceAndLeavesOnceEveryDeviceHasTheDeletionAgain() throws {
    let (devices, written) = try threeDevices(sharing: "old.bin")
    let (a, b, c) = (devices.a, devices.b, devices.c)
    try a.ok(["attach", "remove", try attachmentID(a, "old.bin")])
    // As a Tasker before blob removal left it: the deletion sent, kept in sync_records, noted nowhere.
    try a.ok(["sync", "now"])
    let forget = "DELETE FROM sync_values WHERE name GLOB 'deleted-blob:*' OR name = 'blob-note-pass';"
    #expect(try a.sqlite(forget).status == 0)
    try syncRounds([b, c], orders: [[0, 1]])
    #expect(try attachmentNames(b).isEmpty && attachmentNames(c).isEmpty)
    // The pass sends the deletion again and notes the blob at that object: B and C have not read it yet.
    #expect(try syncRemovingBlobs(a) == 0)
    #expect(try blobs(devices, of: a) == written)
    #expect(try syncRemovingBlobs(b) == 0)
    #expect(try syncRemovingBlobs(a) == 0, "C has not read the deletion sent again")
    #expect(try blobs(devices, of: a) == written)
    #expect(try syncRemovingBlobs(c) == 0)
    #expect(try syncRemovingBlobs(a) == 1)
    #expect(try blobs(devices, of: a).isEmpty)
    #expect(try syncRemovingBlobs(a) == 0, "the pass runs once: nothing is noted again")
  }

  @Test func aDeletionSentAgainAfterAnEpochChangeMadeItsObjectVoidMovesItsBlobsNote() throws {
    let (devices, written) = try threeDevices(sharing: "doomed.bin")
    let (a, b, c) = (devices.a, devices.b, devices.c)
    // B removes C; A is not to see the change yet, so its object is put aside.
    try b.ok(["sync", "remove-device", try c.syncDeviceID()])
    let log = devices.root + "/d/" + (try b.syncDeviceID())
    let change = try #require(try FileManager.default.contentsOfDirectory(atPath: log).max())
    let aside = devices.folder.path + "/change"
    try FileManager.default.moveItem(atPath: log + "/" + change, toPath: aside)
    // A deletes the attachment at epoch 1, past its cut: that object is void for B.
    try a.ok(["attach", "remove", try attachmentID(a, "doomed.bin")])
    #expect(try syncRemovingBlobs(a) == 0)
    // B reads past it, then writes an object whose seen covers that position.
    #expect(try syncRemovingBlobs(b) == 0)
    try b.ok(["add", "b at epoch 2"])
    #expect(try syncRemovingBlobs(b) == 0)
    #expect(try attachmentNames(b) == ["doomed.bin"], "nothing of a void object is applied")
    try FileManager.default.moveItem(atPath: aside, toPath: log + "/" + change)
    // A applies the change and sends every record again at epoch 2: the blob waits for B to have that.
    #expect(try syncRemovingBlobs(a) == 0, "B has not applied the deletion sent again")
    #expect(try blobs(devices, of: a) == written)
    #expect(try syncRemovingBlobs(b) == 0)
    #expect(try attachmentNames(b).isEmpty)
    #expect(try syncRemovingBlobs(a) == 1)
    #expect(try blobs(devices, of: a).isEmpty)
  }

  /// A's blobs `written` under its id `before` (from before `sync off`)
  /// wait while that id, known to every device, no longer syncs, and go
  /// once A removes it.
  func expectRemovedOnceTheOldIDIs(
    _ before: String, written: Set<String>, _ devices: ThreeDevices, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let a = devices.a
    let folder = devices.root + "/a/" + before
    #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == written, sourceLocation: sourceLocation)
    #expect(try syncRemovingBlobs(a) == 0, sourceLocation: sourceLocation)
    try a.ok(["sync", "remove-device", before])
    #expect(try syncRemovingBlobs(a) == 1, sourceLocation: sourceLocation)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, sourceLocation: sourceLocation)
  }

  @Test func aBlobWaitingAtSyncOffIsKeptAndRemovedAfterASetupWithTheSameTarget() throws {
    let (devices, written) = try threeDevices(sharing: "kept.bin")
    let (a, b, c) = (devices.a, devices.b, devices.c)
    try a.ok(["attach", "remove", try attachmentID(a, "kept.bin")])
    #expect(try syncRemovingBlobs(a) == 0)
    let before = try a.syncDeviceID()
    let off = try a.ok(["sync", "off"]).stdoutText
    #expect(off.contains("1 blob of deleted attachments stay at the storage"), "\(off)")
    // Set up again on the same folder: a new device id, the blob still under the old one.
    try a.syncSetUp(devices.folder.path, name: "a again")
    try syncRounds([a, b, c, a, b, c], orders: [[0, 1, 2, 3, 4, 5]])
    try expectRemovedOnceTheOldIDIs(before, written: written, devices)
    let json = try a.json(["sync", "off", "--json"])
    #expect(json["blobs_kept"] as? Int == 0, "\(json)")
  }

  @Test func aBlobOfAnAttachmentRemovedWhileSyncWasOffLeavesAfterASetupWithTheSameTarget() throws {
    let (devices, written) = try threeDevices(sharing: "late.bin")
    let (a, b, c) = (devices.a, devices.b, devices.c)
    let before = try a.syncDeviceID()
    try a.ok(["sync", "off"])
    // Removed while sync is off: its deletion goes out under the new id, the blob is under the old one.
    try a.ok(["attach", "remove", try attachmentID(a, "late.bin")])
    try a.syncSetUp(devices.folder.path, name: "a again")
    try syncRounds([a, b, c, a, b, c], orders: [[0, 1, 2, 3, 4, 5]])
    for device in [b, c] { #expect(try attachmentNames(device).isEmpty) }
    try expectRemovedOnceTheOldIDIs(before, written: written, devices)
  }

  @Test func aNoteNamingAnotherDevicesBlobRemovesNothing() throws {
    let devices = try ThreeDevices()
    let (a, b, c) = (devices.a, devices.b, devices.c)
    try b.attach("content of b's", named: "bs.bin", toTask: "before removal")
    try b.ok(["sync", "now"])
    try syncRounds([a, b, c, a, b, c], orders: [[0, 1, 2, 3, 4, 5]])
    let written = try blobs(devices, of: b)
    let blob = try #require(written.first)
    // A row of A's database says B's blob is A's to remove, as a former id of A: data, not authority.
    try a.sqlite(
      "INSERT INTO sync_values (name, value) VALUES ('deleted-blob:\(blob)', '\(try a.syncDeviceID()):1:\(try b.syncDeviceID())');"
    )
    try syncRounds([a, b, c, a], orders: [[0, 1, 2, 3]])
    #expect(try syncRemovingBlobs(a) == 0)
    #expect(try blobs(devices, of: b) == written)
    #expect(try attachmentNames(b) == ["bs.bin"])
  }

  @Test func aDamagedFormerIDRowRemovesNoBlobAndSaysWhichRow() throws {
    let (devices, written) = try threeDevices(sharing: "rows.bin")
    let (a, b, c) = (devices.a, devices.b, devices.c)
    try a.ok(["attach", "remove", try attachmentID(a, "rows.bin")])
    #expect(try syncRemovingBlobs(a) == 0)
    try syncRounds([b, c], orders: [[0, 1]])
    // The blob is due now; a row of sync_values that is not a device id and a target id is checked first.
    for (name, value) in [
      ("former-device:not-hex", String(repeating: "0", count: 32)),
      ("former-device:" + String(repeating: "a", count: 32), "x"),
    ] {
      try a.sqlite("INSERT INTO sync_values (name, value) VALUES ('\(name)', '\(value)');")
      let synced = try a.tasker(["sync", "now"])
      #expect(synced.status == 52, "\(synced.stderr)")
      #expect(synced.stderr.contains("\(name) is not a device and a target"), "\(synced.stderr)")
      #expect(try blobs(devices, of: a) == written, "nothing removed past a damaged row")
      try a.sqlite("DELETE FROM sync_values WHERE name = '\(name)';")
    }
    #expect(try syncRemovingBlobs(a) == 1)
    #expect(try blobs(devices, of: a).isEmpty)
  }

  @Test func aDamagedKeptBlobRowStopsTheSetupNamingItAndASetupAfterItsRepairTakesItBack() throws {
    let (devices, written) = try threeDevices(sharing: "kept-row.bin")
    let a = devices.a
    try a.ok(["attach", "remove", try attachmentID(a, "kept-row.bin")])
    #expect(try syncRemovingBlobs(a) == 0)
    let blob = try #require(written.first)
    try a.ok(["sync", "off"])
    let kept = try a.sqlite("SELECT value FROM sync_values WHERE name = 'kept-blob:\(blob)';").stdoutText
    try a.sqlite("UPDATE sync_values SET value = 'not:a-device' WHERE name = 'kept-blob:\(blob)';")
    let setup = try a.tasker(["sync", "setup", devices.folder.path, "--name", "a again"])
    #expect(setup.status == 52, "\(setup.stderr)")
    #expect(setup.stderr.contains("kept-blob:\(blob) is not a target and a device"), "\(setup.stderr)")
    // Nothing of the setup stayed: sync is still off, the kept row as it was left.
    #expect(try a.tasker(["sync", "now"]).status != 0)
    #expect(
      try a.sqlite("SELECT value FROM sync_values WHERE name = 'kept-blob:\(blob)';").stdoutText == "not:a-device\n")
    try a.sqlite(
      "UPDATE sync_values SET value = '\(kept.trimmingCharacters(in: .newlines))' WHERE name = 'kept-blob:\(blob)';")
    try a.syncSetUp(devices.folder.path, name: "a again")
    #expect(try a.sqlite("SELECT count(*) FROM sync_values WHERE name GLOB 'kept-blob:*';").stdoutText == "0\n")
  }
}
