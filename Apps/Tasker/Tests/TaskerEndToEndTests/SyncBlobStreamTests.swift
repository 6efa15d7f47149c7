import Foundation
import TaskKeyTestSupport
import TaskerTestSupport
import Testing

/// Blobs streamed both ways without a staging copy: an upload seals the
/// local file on a second thread while the storage takes what was sealed
/// before, and holds back its last piece until the seal has ended whole,
/// so a local file that is not its recorded length reaches the storage as
/// nothing at all; a fetch refused early in a large blob ends as a clean
/// refusal, its download stopped.
@Suite("Sync of attachments: blobs streamed without staging, refused whole")
struct SyncBlobStreamTests {
  static let users = ["alice": "pw-alice-3c9e01", "bob": "pw-bob-77a2d4"]

  /// `count` bytes that are not all alike.
  static func content(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 9) })
  }

  /// Every regular file under `folder`, by path relative to it.
  static func files(under folder: String) -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: folder)
    var found: [String] = []
    while let name = enumerator?.nextObject() as? String {
      var isFolder: ObjCBool = false
      if FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isFolder), !isFolder.boolValue {
        found.append(name)
      }
    }
    return found.sorted()
  }

  /// Appends one byte to `path`, or cuts its last one.
  static func change(_ path: String, grow: Bool) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    let end = try handle.seekToEnd()
    if grow {
      try handle.write(contentsOf: Data([0x2A]))
    } else {
      try handle.truncate(atOffset: end - 1)
    }
  }

  /// Grows attachment `id`'s file by a byte, then cuts its last byte: each
  /// time `sync now` exits 65 naming it, then `check` runs and the file is
  /// put back as `content`.
  static func expectEachLengthRefused(
    _ device: TestDevice, id: String, content: Data, check: (_ grown: Bool) throws -> Void
  ) throws {
    let file = device.root.path("tasker/attachments/\(id)")
    for grow in [true, false] {
      try Self.change(file, grow: grow)
      let refused = try device.tasker(["sync", "now"])
      #expect(refused.status == 65, "\(refused.stderr)")
      #expect(refused.stderr.contains("attachment \(id) cannot be sent: its file cannot be read"), "\(refused.stderr)")
      try check(grow)
      try content.write(to: URL(fileURLWithPath: file))
    }
  }

  /// A task "report" on `device` with an attachment of `count` bytes.
  ///
  /// - Returns: the attachment's id and its content.
  static func attach(_ count: Int, on device: TestDevice) throws -> (id: String, content: Data) {
    try device.ok(["add", "report"])
    let content = Self.content(count)
    let source = device.root.path("big.bin")
    try content.write(to: URL(fileURLWithPath: source))
    let added = try device.json(["attach", "add", "--task", try device.taskID("report"), source, "--json"])
    return (try #require(added["id"] as? String), content)
  }

  @Test func aLocalFileNotItsRecordedLengthSendsNothingToAFolder() throws {
    let folder = try TaskerTestSupport.TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    let (id, content) = try Self.attach((3 << 20) + 4_321, on: a)
    let root = folder.path + "/tasker-sync"
    // The blob's folder is refused (a symlink), so the record is sealed into the outbox and the blob waits.
    try FileManager.default.createDirectory(atPath: folder.path + "/elsewhere", withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(atPath: root + "/a", withDestinationPath: folder.path + "/elsewhere")
    #expect(try a.tasker(["sync", "now"]).status == 77)
    try FileManager.default.removeItem(atPath: root + "/a")
    let stored = Self.files(under: root)
    let database = try a.syncSnapshot(everything: true)
    try Self.expectEachLengthRefused(a, id: id, content: content) { grown in
      // Nothing of the blob at the storage, not even a temporary; the database as it was.
      #expect(Self.files(under: root) == stored, "grown \(grown)")
      let snapshot = try a.syncSnapshot(everything: true)
      #expect(snapshot == database, "grown \(grown)")
    }
    // Its length back, it is sent, and another device reads exactly the content.
    try a.ok(["sync", "now"])
    #expect(Self.files(under: root + "/a").count == 1)
    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    let listed = try #require(try b.json(["attach", "list", "--json"])["attachments"] as? [[String: Any]])
    let onB = try #require(listed.first?["id"] as? String)
    try b.ok(["attach", "get", onB, "--out", b.root.path("out")])
    #expect(try Data(contentsOf: URL(fileURLWithPath: b.root.path("out"))) == content)
  }

  @Test func aRowWhoseLengthNoBlobCanHoldIsRefusedBeforeAnythingIsSent() throws {
    let folder = try TaskerTestSupport.TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    let id = try Self.attach(5_000, on: a).id
    // A length past what the attachment format can seal (2^38 chunks of 16 KiB), written into the row.
    #expect(try a.sqlite("UPDATE attachments SET byte_count = 6000000000000000 WHERE id = \(id);").status == 0)
    let refused = try a.tasker(["sync", "now"])
    #expect(refused.status == 65, "\(refused.stderr)")
    #expect(
      refused.stderr.contains("attachment \(id) cannot be sent: it is larger than a blob can hold"), "\(refused.stderr)"
    )
    // Neither the blob nor the object with its record left: the storage holds its marker only.
    #expect(Self.files(under: folder.path + "/tasker-sync") == ["target"])
  }

  @Test func aLargeBlobAlteredNearItsStartIsRefusedCleanlyAtTheFetch() throws {
    let folder = try TaskerTestSupport.TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    // Far more than the pieces the download may queue ahead of the reader.
    let content = try Self.attach(24 << 20, on: a).content
    try a.ok(["sync", "now"])
    let blobs = Self.files(under: folder.path + "/tasker-sync/a")
    let blob = folder.path + "/tasker-sync/a/" + (try #require(blobs.first))
    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    let listed = try #require(try b.json(["attach", "list", "--json"])["attachments"] as? [[String: Any]])
    let id = try #require(listed.first?["id"] as? String)
    let original = try Data(contentsOf: URL(fileURLWithPath: blob))
    var altered = original
    altered[100_000] ^= 0x01
    try altered.write(to: URL(fileURLWithPath: blob))
    // Refused in its first chunk while the download runs ahead: a clean refusal (not a crash), twice.
    for _ in 0..<2 {
      let refused = try b.tasker(["attach", "get", id, "--out", b.root.path("out")])
      #expect(refused.status == 61 && refused.stderr.contains("authentication_failed"), "\(refused.stderr)")
      #expect(!FileManager.default.fileExists(atPath: b.root.path("out")))
    }
    try original.write(to: URL(fileURLWithPath: blob))
    try b.ok(["attach", "get", id, "--out", b.root.path("out")])
    #expect(try Data(contentsOf: URL(fileURLWithPath: b.root.path("out"))) == content)
  }

  @Test func aLocalFileNotItsRecordedLengthLeavesNothingAtAWebDAVServer() throws {
    let server = try WebDAVServer(users: Self.users)
    let ca = try #require(server.caFile)
    let a = try TestDevice(passphrase: "device a")
    try a.davSetUp(server.httpsURL, user: "alice", password: Self.users["alice"]!, caFile: ca, name: "a")
    let (id, content) = try Self.attach((3 << 20) + 777, on: a)
    let stored = Self.files(under: server.syncRoot)
    // A length found wrong only at the file's end, once most of the blob went: the PUT was under way.
    try Self.expectEachLengthRefused(a, id: id, content: content) { grown in
      // No blob, no object; mod_dav_fs removes its temporary of the stopped PUT once it sees the
      // connection close, which may come a moment after tasker ended.
      let deadline = Date().addingTimeInterval(10)
      while Self.files(under: server.syncRoot) != stored, Date() < deadline { usleep(50_000) }
      #expect(Self.files(under: server.syncRoot) == stored, "grown \(grown)")
    }
    try a.ok(["sync", "now"])
    let blobs = Self.files(under: server.syncRoot + "/a")
    #expect(blobs.count == 1, "\(blobs)")
    let b = try TestDevice(passphrase: "device b")
    try b.davJoin(keysFrom: a, url: server.httpsURL, user: "bob", password: Self.users["bob"]!, caFile: ca, name: "b")
    let listed = try #require(try b.json(["attach", "list", "--json"])["attachments"] as? [[String: Any]])
    try b.ok(["attach", "get", try #require(listed.first?["id"] as? String), "--out", b.root.path("out")])
    #expect(try Data(contentsOf: URL(fileURLWithPath: b.root.path("out"))) == content)
  }

  /// `tasker ARGUMENTS` on `device` with a terminal for its standard input
  /// and error (scripts/pty-drive.py).
  static func onTerminal(_ device: TestDevice, _ arguments: [String]) throws -> TerminalDriver.Outcome {
    var environment = device.environment
    environment["PATH"] = "/usr/bin:/bin"
    environment["LANG"] = "C.UTF-8"
    return try TerminalDriver.drive(
      command: [Binary.tasker.path] + arguments, environment: environment,
      home: try TaskKeyTestSupport.TemporaryDirectory(), steps: [], interactive: true)
  }

  @Test func aTerminalSeesEachStepAndHowFarEachBlobHasCome() throws {
    let folder = try TaskerTestSupport.TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    let (_, content) = try Self.attach((3 << 20) + 99, on: a)
    let sent = try Self.onTerminal(a, ["sync", "now"])
    #expect(sent.status == 0, "\(sent.terminal)")
    // The blob's line is drawn again in place as it grows (its size in MiB, one decimal), and ended
    // before the objects' lines.
    let blobs = Self.files(under: folder.path + "/tasker-sync/a")
    let length = try FileManager.default.attributesOfItem(atPath: folder.path + "/tasker-sync/a/" + blobs[0])[.size]
    let tenths = Int((Double(try #require(length as? Int)) / 1_048_576 * 10).rounded())
    let blob = "\(tenths / 10).\(tenths % 10) MiB"
    let drawn = sent.terminal.components(separatedBy: "\rtasker: sending attachment 1 of 1: ").count - 1
    #expect(drawn >= 3, "\(sent.terminal.debugDescription)")
    for line in [
      "\rtasker: sending attachment 1 of 1: 0% of \(blob)",
      "\rtasker: sending attachment 1 of 1: 100% of \(blob)\r\ntasker: sending object 1 of",
    ] {
      #expect(sent.terminal.contains(line), "\(line.debugDescription) in \(sent.terminal.debugDescription)")
    }
    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b", sync: false)
    let pulled = try Self.onTerminal(b, ["sync", "now"])
    #expect(
      pulled.status == 0 && pulled.terminal.contains("tasker: applying object 1 of device "), "\(pulled.terminal)")
    let listed = try #require(try b.json(["attach", "list", "--json"])["attachments"] as? [[String: Any]])
    let id = try #require(listed.first?["id"] as? String)
    let fetched = try Self.onTerminal(b, ["attach", "get", id, "--out", b.root.path("out")])
    #expect(fetched.status == 0, "\(fetched.terminal)")
    #expect(
      fetched.terminal.contains("\rtasker: fetching attachment \(id): 100% of \(blob)\r\n"), "\(fetched.terminal)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: b.root.path("out"))) == content)
    // Without a terminal, none of it: standard error stays empty.
    try a.ok(["edit", try a.taskID("report"), "--priority", "high"])
    let quiet = try a.tasker(["sync", "now"])
    #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
  }
}
