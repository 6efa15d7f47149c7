import Foundation
import TaskerTestSupport
import Testing

/// Attachments through Layer-1 sync, end to end with the real binaries
/// (docs/formats/sync-storage.md, *Attachments*): a record in a change
/// object and a blob of its own, sealed whatever the local setting,
/// fetched when first read, and refused whole when the storage alters it.
@Suite("Sync of attachments: sealed blobs, fetched when first read, refused when altered")
struct SyncAttachmentTests {
  /// 100 KiB that are not all alike, with a canary the storage must never show.
  static func content(_ canary: String) -> Data {
    var bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) })
    bytes.replaceSubrange(5000..<(5000 + canary.utf8.count), with: Data(canary.utf8))
    return bytes
  }

  func attachments(_ device: TestDevice) throws -> [[String: Any]] {
    try device.json(["attach", "list", "--json"])["attachments"] as? [[String: Any]] ?? []
  }

  /// Every regular file under `folder`, by path.
  func files(under folder: String) throws -> [String: Data] {
    var found: [String: Data] = [:]
    let enumerator = FileManager.default.enumerator(atPath: folder)
    while let name = enumerator?.nextObject() as? String {
      let path = folder + "/" + name
      var isFolder: ObjCBool = false
      if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
        found[name] = try Data(contentsOf: URL(fileURLWithPath: path))
      }
    }
    return found
  }

  /// The blobs at the storage: paths under `tasker-sync/a/`.
  func blobs(_ folder: String) throws -> [String] {
    try files(under: folder + "/tasker-sync").keys.filter { $0.hasPrefix("a/") }.sorted()
  }

  @Test func attachmentsTravelSealedAndAreFetchedWhenFirstRead() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    try a.ok(["add", "report"])
    try a.ok(["page", "new", "Plans"])
    let canary = "CANARYATTACHMENT51f0"
    let source = a.root.path("results.pdf")
    try Self.content(canary).write(to: URL(fileURLWithPath: source))
    try a.ok(["attach", "add", "--task", try a.taskID("report"), source])
    try a.ok(["attach", "add", "--page", try a.pageID("Plans"), "--name", "empty.txt", "-"], input: "")
    try a.ok(["sync", "now"])

    // The storage holds two blobs, named without content, of padded sizes, and no canary anywhere.
    let stored = try files(under: folder.path + "/tasker-sync")
    #expect(try blobs(folder.path).count == 2, "\(stored.keys.sorted())")
    for (name, bytes) in stored {
      #expect(bytes.range(of: Data(canary.utf8)) == nil, "\(name) shows the canary")
      #expect(bytes.range(of: Data("results.pdf".utf8)) == nil, "\(name) shows the name")
    }
    let sizes = Set(try blobs(folder.path).map { stored[$0]!.count })
    // 100,000 bytes pad to 100,352 (Padmé), sealed with 7 chunk tags: 69 + 100,352 + 112; empty pads to 512.
    #expect(sizes == [69 + 100_352 + 16 * 7, 69 + 512 + 16], "\(sizes)")

    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    let listed = try attachments(b)
    #expect(listed.count == 2, "\(listed)")
    #expect(listed.allSatisfy { $0["remote"] as? Bool == true }, "\(listed)")
    let report = try #require(listed.first { $0["name"] as? String == "results.pdf" })
    #expect(report["byte_count"] as? Int == 100_000 && report["media_type"] as? String == "application/pdf")
    let reportTask = try b.taskID("report")
    #expect(report["task_id"] as? String == reportTask)
    let id = try #require(report["id"] as? String)
    // Nothing is fetched before the first read.
    #expect(!FileManager.default.fileExists(atPath: b.root.path("tasker/attachments/\(id)")))
    #expect(try b.tasker(["attach", "get", id]).stdout == [UInt8](Self.content(canary)))
    #expect(try attachments(b).first { $0["id"] as? String == id }?["remote"] as? Bool == false)
    #expect(
      try b.tasker(["attach", "get", id]).stdout == [UInt8](Self.content(canary)), "read again, from the local file")
    let empty = try #require(listed.first { $0["name"] as? String == "empty.txt" }?["id"] as? String)
    let out = b.root.path("empty-out")
    try b.ok(["attach", "get", empty, "--out", out])
    #expect(try Data(contentsOf: URL(fileURLWithPath: out)).isEmpty)

    // A third device with attachment encryption on keeps what it fetches sealed.
    let c = try TestDevice(passphrase: "device c")
    try c.syncJoin(keysFrom: a, folder: folder.path, name: "c")
    try c.ok(["settings", "set", "attachment-encryption", "on"])
    let onC = try #require(try attachments(c).first { $0["name"] as? String == "results.pdf" }?["id"] as? String)
    #expect(try c.tasker(["attach", "get", onC]).stdout == [UInt8](Self.content(canary)))
    let kept = try Data(contentsOf: URL(fileURLWithPath: c.root.path("tasker/attachments/\(onC)")))
    #expect(kept.prefix(4) == Data([0x89, 0x54, 0x4B, 0x41]) && kept.range(of: Data(canary.utf8)) == nil)

    // An attachment added on B to A's task reaches A; one removed on C is removed everywhere.
    let note = b.root.path("note.txt")
    try Data("from b".utf8).write(to: URL(fileURLWithPath: note))
    try b.ok(["attach", "add", "--task", try b.taskID("report"), note])
    try c.ok([
      "attach", "remove",
      try #require(try attachments(c).first { $0["name"] as? String == "empty.txt" }?["id"] as? String),
    ])
    try syncRounds([a, b, c], orders: [[1, 2, 0], [0, 1, 2]])
    for device in [a, b, c] {
      let names = try attachments(device).compactMap { $0["name"] as? String }.sorted()
      #expect(names == ["note.txt", "results.pdf"], "\(names)")
    }
    let fromB = try #require(try attachments(a).first { $0["name"] as? String == "note.txt" }?["id"] as? String)
    #expect(try a.tasker(["attach", "get", fromB]).stdoutText == "from b")

    // Deleting the task deletes its attachments on every device.
    try a.ok(["delete", try a.taskID("report")])
    try syncRounds([a, b, c], orders: [[0, 1, 2]])
    for device in [a, b, c] { #expect(try attachments(device).isEmpty) }
  }

  @Test func anAlteredOrMissingBlobIsRefusedAndNothingIsKept() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    try a.ok(["add", "report"])
    let first = a.root.path("first.bin")
    let second = a.root.path("second.bin")
    try Self.content("FIRST").write(to: URL(fileURLWithPath: first))
    try Self.content("SECOND").write(to: URL(fileURLWithPath: second))
    try a.ok(["attach", "add", "--task", try a.taskID("report"), first])
    try a.ok(["sync", "now"])
    try a.ok(["attach", "add", "--task", try a.taskID("report"), second])
    try a.ok(["sync", "now"])
    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    let listed = try attachments(b)
    let id = try #require(listed.first { $0["name"] as? String == "first.bin" }?["id"] as? String)
    // Blobs are named at random: find first.bin's by the name its record gives.
    let root = folder.path + "/tasker-sync/"
    let paths = try blobs(folder.path)
    let state = try b.sqlite("SELECT state FROM sync_records WHERE kind = 'attachment' AND local_id = \(id);")
    let blobName = try #require(paths.first { state.stdoutText.contains(String($0.suffix(32))) })
    let otherName = try #require(paths.first { $0 != blobName })
    let original = try Data(contentsOf: URL(fileURLWithPath: root + blobName))
    let attachmentsFolder = b.root.path("tasker/attachments")

    func expectRefused(_ bytes: Data?, exit: Int32, outcome: String, sourceLocation: SourceLocation = #_sourceLocation)
      throws
    {
      let url = URL(fileURLWithPath: root + blobName)
      try? FileManager.default.removeItem(at: url)
      if let bytes { try bytes.write(to: url) }
      let result = try b.tasker(["attach", "get", id, "--out", b.root.path("out-\(outcome)")])
      #expect(result.status == exit, "\(outcome): \(result.stderr)", sourceLocation: sourceLocation)
      #expect(result.stderr.contains(outcome), "\(result.stderr)", sourceLocation: sourceLocation)
      #expect(result.stdout.isEmpty, sourceLocation: sourceLocation)
      #expect(!FileManager.default.fileExists(atPath: b.root.path("out-\(outcome)")), sourceLocation: sourceLocation)
      let kept = (try? FileManager.default.contentsOfDirectory(atPath: attachmentsFolder)) ?? []
      #expect(!kept.contains(id), "nothing kept after \(outcome)", sourceLocation: sourceLocation)
      #expect(try attachments(b).first { $0["id"] as? String == id }?["remote"] as? Bool == true)
    }
    var flipped = original
    flipped[flipped.count / 2] ^= 0x01
    try expectRefused(flipped, exit: 61, outcome: "authentication_failed")
    try expectRefused(
      try Data(contentsOf: URL(fileURLWithPath: root + otherName)), exit: 61, outcome: "authentication_failed")
    try expectRefused(original.prefix(original.count - 1), exit: 61, outcome: "truncated")
    try expectRefused(original + Data([0]), exit: 61, outcome: "too_large")
    var magic = original
    magic[1] = 0x00
    try expectRefused(magic, exit: 61, outcome: "malformed_blob")
    try expectRefused(nil, exit: 69, outcome: "blob_missing")
    // Put back, it opens: nothing of the refusals stayed behind.
    try original.write(to: URL(fileURLWithPath: root + blobName))
    #expect(try b.tasker(["attach", "get", id]).stdout == [UInt8](Self.content("FIRST")))
    #expect(try b.tasker(["attach", "get", id]).status == 0)
    // A fetch streams the blob through its checks into the attachment's temporary: B, which never
    // uploaded a blob, has no staging folder at all.
    let stagingFolder = b.root.path("tasker/sync-blobs")
    #expect(!FileManager.default.fileExists(atPath: stagingFolder))
    // What a killed upload (or a fetch of an earlier version) leaves there goes at the next sync; nothing
    // else is touched.
    try FileManager.default.createDirectory(
      atPath: stagingFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let stale = [String(repeating: "a", count: 32) + ".up", String(repeating: "b", count: 32) + ".down", "mine.txt"]
    for name in stale { try Data("x".utf8).write(to: URL(fileURLWithPath: stagingFolder + "/" + name)) }
    try b.ok(["sync", "now"])
    #expect(try FileManager.default.contentsOfDirectory(atPath: stagingFolder) == ["mine.txt"])
  }

  @Test func anAttachmentThatArrivesBeforeItsOwnerIsShownWithIt() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    try a.ok(["sync", "now"])
    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    try a.ok(["add", "owner task"])
    try a.ok(["sync", "now"])
    try b.ok(["sync", "now"])
    let file = b.root.path("x.txt")
    try Data("attached on b".utf8).write(to: URL(fileURLWithPath: file))
    try b.ok(["attach", "add", "--task", try b.taskID("owner task"), file])
    try b.ok(["sync", "now"])
    // C reads B's objects while A's (which create the task) are held back.
    let aFolder = folder.path + "/tasker-sync/d/" + (try a.syncDeviceID())
    let held = folder.path + "/held"
    try FileManager.default.moveItem(atPath: aFolder, toPath: held)
    let c = try TestDevice(passphrase: "device c")
    try c.syncJoin(keysFrom: a, folder: folder.path, name: "c")
    #expect(try attachments(c).isEmpty)
    try FileManager.default.moveItem(atPath: held, toPath: aFolder)
    try c.ok(["sync", "now"])
    let shown = try attachments(c)
    let owner = try c.taskID("owner task")
    #expect(shown.count == 1 && shown.first?["task_id"] as? String == owner, "\(shown)")
    #expect(try c.tasker(["attach", "get", try #require(shown.first?["id"] as? String)]).stdoutText == "attached on b")
  }
}
