import Foundation
import TaskerTestSupport
import Testing

/// Attachments through a real Apache mod_dav over https: the blob is a
/// streamed PUT with `If-None-Match: *`, the fetch a streamed GET checked
/// whole before anything is kept, and the removal of a deleted
/// attachment's blob a DELETE.
@Suite("Sync of attachments through WebDAV (Apache mod_dav, https)")
struct SyncWebDAVAttachmentTests {
  static let users = ["alice": "pw-alice-a81c2e", "bob": "pw-bob-5e0d11"]

  @Test func blobsStreamBothWaysAndAnAlteredOneIsRefused() throws {
    let server = try WebDAVServer(users: Self.users)
    let ca = try #require(server.caFile)
    let a = try TestDevice(passphrase: "device a")
    try a.davSetUp(server.httpsURL, user: "alice", password: Self.users["alice"]!, caFile: ca, name: "a")
    try a.ok(["add", "report"])
    // 3 MiB and a bit: several chunks of the attachment format and of libcurl's buffers.
    let canary = Data("CANARYDAVBLOB90ce".utf8)
    var content = Data((0..<(3 << 20) + 12_345).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 11) })
    content.replaceSubrange(1_000_000..<(1_000_000 + canary.count), with: canary)
    let source = a.root.path("big.bin")
    try content.write(to: URL(fileURLWithPath: source))
    try a.ok(["attach", "add", "--task", try a.taskID("report"), source])
    try a.ok(["sync", "now"])

    let blobs = try FileManager.default.subpathsOfDirectory(atPath: server.syncRoot + "/a")
      .filter { $0.split(separator: "/").count == 2 }
    #expect(blobs.count == 1, "\(blobs)")
    let blobPath = server.syncRoot + "/a/" + (blobs.first ?? "")
    let stored = try Data(contentsOf: URL(fileURLWithPath: blobPath))
    #expect(stored.range(of: canary) == nil && stored.prefix(4) == Data([0x89, 0x54, 0x4B, 0x41]))
    #expect(stored.count > content.count && stored.count < content.count + content.count / 8, "padded")

    let b = try TestDevice(passphrase: "device b")
    try b.davJoin(keysFrom: a, url: server.httpsURL, user: "bob", password: Self.users["bob"]!, caFile: ca, name: "b")
    let listed = try #require(try b.json(["attach", "list", "--json"])["attachments"] as? [[String: Any]])
    let id = try #require(listed.first?["id"] as? String)
    #expect(listed.first?["remote"] as? Bool == true && listed.first?["byte_count"] as? Int == content.count)

    // Altered at the server: refused, nothing kept, and the password never in the output.
    var flipped = stored
    flipped[stored.count - 100] ^= 0x40
    try flipped.write(to: URL(fileURLWithPath: blobPath))
    let refused = try b.tasker(["attach", "get", id, "--out", b.root.path("out")])
    #expect(refused.status == 61 && refused.stderr.contains("authentication_failed"), "\(refused.stderr)")
    #expect(!refused.stderr.contains(Self.users["bob"]!) && !FileManager.default.fileExists(atPath: b.root.path("out")))
    try FileManager.default.removeItem(atPath: blobPath)
    let missing = try b.tasker(["attach", "get", id, "--out", b.root.path("out")])
    #expect(missing.status == 69 && missing.stderr.contains("blob_missing"), "\(missing.stderr)")

    // Put back: the streamed GET opens it.
    try stored.write(to: URL(fileURLWithPath: blobPath))
    try b.ok(["attach", "get", id, "--out", b.root.path("out")])
    #expect(try Data(contentsOf: URL(fileURLWithPath: b.root.path("out"))) == content)
    #expect(
      try b.json(["attach", "list", "--json"])["attachments"].flatMap { $0 as? [[String: Any]] }?.first?["remote"]
        as? Bool == false)

    // Removed on A: once B has acknowledged the deletion, A's sync DELETEs the blob.
    let onA = try #require(try a.json(["attach", "list", "--json"])["attachments"] as? [[String: Any]])
    try a.ok(["attach", "remove", try #require(onA.first?["id"] as? String)])
    try a.ok(["sync", "now"])
    try b.ok(["sync", "now"])
    #expect(FileManager.default.fileExists(atPath: blobPath), "A has not read B's acknowledgement yet")
    let removed = try a.json(["sync", "now", "--json"])["compaction"] as? [String: Any]
    #expect(removed?["blobs_removed"] as? Int == 1, "\(String(describing: removed))")
    #expect(!FileManager.default.fileExists(atPath: blobPath))
  }
}
