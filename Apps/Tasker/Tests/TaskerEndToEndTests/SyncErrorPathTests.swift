import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

/// The sync errors no other test reaches, through the real binaries: each
/// exits with its code from the one table (SECURITY.md chapter 11), says
/// what to do next, and leaves the storage, the vaults and the database as
/// they were.
@Suite("Sync: every refusal of a vault item, a record or an argument has its code and changes nothing")
struct SyncErrorPathTests {
  /// One device set up on a folder, with a task synced.
  struct Solo {
    let folder: TemporaryDirectory
    let a: TestDevice

    init() throws {
      folder = try TemporaryDirectory()
      a = try TestDevice(passphrase: "device a")
      try a.syncSetUp(folder.path, name: "a")
      try a.ok(["add", "synced", "--notes", "-"], input: "a synced note")
      try a.ok(["sync", "now"])
    }

    var root: String { folder.path + "/tasker-sync" }
    func disk() throws -> [String: [UInt8]?] { try diskState(storage: root, vaults: [a]) }
  }

  /// Runs `arguments` on `device`: exit `status`, stderr naming each of
  /// `messages`, and the database and `disk` as before.
  func expectRefusal(
    _ device: TestDevice, _ arguments: [String], status: Int32, messages: [String],
    disk: () throws -> [String: [UInt8]?], sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let files = try disk()
    let database = try device.syncSnapshot(everything: true)
    let result = try device.tasker(arguments)
    #expect(result.status == status, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
    for message in messages {
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
    }
    #expect(result.stdout.isEmpty, "\(arguments) printed \(result.stdoutText)", sourceLocation: sourceLocation)
    #expect(try disk() == files, "\(arguments) changed a file", sourceLocation: sourceLocation)
    #expect(try device.syncSnapshot(everything: true) == database, "\(arguments)", sourceLocation: sourceLocation)
  }

  @Test func removingWhileAStayingDeviceHasNoBoxKeyAtTheStorageExits69() throws {
    let three = try ThreeDevices()
    let bID = try three.b.syncDeviceID()
    // The storage withholds B's objects, the only place A reads B's box key from.
    let folder = three.root + "/d/" + bID
    for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
      try FileManager.default.removeItem(atPath: folder + "/" + name)
    }
    try expectRefusal(
      three.a, ["sync", "remove-device", try three.c.syncDeviceID()], status: 69,
      messages: ["device b (\(bID)) has not sent its box key yet", "hint: run 'tasker sync' on that device first"],
      disk: three.disk)
    // No removal was begun: a sync carries on at epoch 1.
    try three.a.ok(["sync", "now"])
    #expect(try three.a.json(["sync", "status", "--json"])["epoch"] as? Int == 1)
  }

  @Test func aBoxKeyItemOfAnotherLengthOrClassExits15() throws {
    let solo = try Solo()
    let name = try solo.a.vaultItemName(prefix: "tasker.sync-box:")
    let original = try solo.a.vaultItemBytes(name)
    #expect(original.count == 32)
    for (bytes, deviceOnly) in [(Array(original.prefix(31)), true), (original + [0], true), (original, false)] {
      try solo.a.setVaultItem(name, bytes, deviceOnly: deviceOnly)
      try expectRefusal(
        solo.a, ["sync", "now"], status: 15,
        messages: ["refused the vault item \(name): malformed", "hint: run 'tasker sync off' and set up again"],
        disk: solo.disk)
    }
    try solo.a.setVaultItem(name, original, deviceOnly: true)
    try solo.a.ok(["sync", "now"])
  }

  @Test func aRecordTooLargeToSyncExits65AndSendsNothingUntilShortened() throws {
    let solo = try Solo()
    // 3.5 MiB of note, over 4 MiB once sealed under the note keys and in base64.
    try solo.a.ok(["add", "huge", "--notes", "-"], input: String(repeating: "0123456789abcdef", count: 229_376))
    let id = try solo.a.taskID("huge")
    try expectRefusal(
      solo.a, ["sync", "now"], status: 65, messages: ["is too large to sync (over 4 MiB sealed)", "hint: shorten"],
      disk: solo.disk)
    let objects = try FileManager.default.contentsOfDirectory(atPath: solo.root + "/d/" + solo.a.syncDeviceID())
    try solo.a.ok(["edit", id, "--notes", "-"], input: "short now")
    try solo.a.ok(["sync", "now"])
    let after = try FileManager.default.contentsOfDirectory(atPath: solo.root + "/d/" + solo.a.syncDeviceID())
    #expect(after.count == objects.count + 1, "the shortened note is sent: \(after)")
  }

  @Test func anAttachmentAnUndoBroughtBackWithoutItsContentExits65NamingItUntilRemoved() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    try a.ok(["add", "report"])
    try a.attach("the report", named: "report.txt", toTask: "report")
    try a.ok(["sync", "now"])
    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    // B, which never fetched the attachment, deletes its task, syncs, and undoes the delete: the task and
    // the attachment's row come back as new ones, without the content.
    let deleted = try b.json(["delete", try b.taskID("report"), "--json"])
    try b.ok(["sync", "now"])
    try b.ok(["undo", try #require(deleted["receipt"] as? String)])
    let listed = try #require(try b.json(["attach", "list", "--json"])["attachments"] as? [[String: Any]])
    let id = try #require(listed.first?["id"] as? String)
    let disk = { try diskState(storage: folder.path + "/tasker-sync", vaults: [a, b]) }
    for _ in 0..<2 {
      try expectRefusal(
        b, ["sync", "now"], status: 65,
        messages: [
          "attachment \(id) cannot be sent: its file cannot be read", "nothing was sent",
          "hint: put its file back, or remove it ('tasker attach remove \(id)')",
        ], disk: disk)
    }
    // Marked as never fetched, it is refused as such.
    #expect(try b.sqlite("UPDATE attachments SET remote = 1 WHERE id = \(id);").status == 0)
    try expectRefusal(
      b, ["sync", "now"], status: 65,
      messages: ["attachment \(id) cannot be sent: its content is not on this device (it was never fetched"],
      disk: disk)
    // Removed, the task syncs; A shows the task back and A's own attachment stays deleted.
    try b.ok(["attach", "remove", id])
    try b.ok(["sync", "now"])
    try a.ok(["sync", "now"])
    #expect(try a.taskTitles() == ["report"])
    #expect((try a.json(["attach", "list", "--json"])["attachments"] as? [Any])?.isEmpty == true)
  }

  @Test func anAttachmentWhoseFileWentAfterItsRecordWasSealedExits65AtTheUpload() throws {
    let solo = try Solo()
    let id = try solo.a.attach("the report", named: "report.txt", toTask: "synced")
    // The blob's folder is refused (a symlink), so the record is sealed into the outbox and the blob waits.
    let blobs = solo.root + "/a"
    try FileManager.default.createDirectory(atPath: solo.folder.path + "/elsewhere", withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(atPath: blobs, withDestinationPath: solo.folder.path + "/elsewhere")
    #expect(try solo.a.tasker(["sync", "now"]).status == 77)
    try FileManager.default.removeItem(atPath: blobs)
    // The file goes before the blob could be sealed from it: the upload refuses, naming it.
    try FileManager.default.removeItem(atPath: solo.a.root.path("tasker/attachments/\(id)"))
    try expectRefusal(
      solo.a, ["sync", "now"], status: 65, messages: ["attachment \(id) cannot be sent: its file cannot be read"],
      disk: solo.disk)
    try solo.a.ok(["attach", "remove", id])
    try solo.a.ok(["sync", "now"])
    #expect(!FileManager.default.fileExists(atPath: blobs), "no blob was written")
  }

  @Test func resolvingARecordWithoutAConflictExits19() throws {
    let solo = try Solo()
    let id = try solo.a.taskID("synced")
    // A change not yet synced: resolve seals pending changes first, and must undo that too.
    try solo.a.ok(["edit", id, "--priority", "high"])
    try expectRefusal(
      solo.a, ["resolve", "task", id, "--keep", "1"], status: 19,
      messages: ["no conflict to resolve on task \(id)", "hint: run 'tasker conflicts'"], disk: solo.disk)
  }

  @Test func aTamperedConfigurationRecordExits15OrAsAnUnsupportedVersion() throws {
    let solo = try Solo()
    let name = try solo.a.vaultItemName(prefix: "tasker.sync:")
    let original = try solo.a.vaultItemBytes(name)
    let text = String(decoding: original, as: UTF8.self)
    #expect(text.hasPrefix("tasker-sync 1\ntarget folder "))
    let cases: [(String, Int32, String)] = [
      (text.replacingOccurrences(of: "\nname a\n", with: "\nname a \n"), 15, "malformed"),
      (String(text.dropLast()), 15, "malformed"),
      (text.replacingOccurrences(of: "tasker-sync 1\n", with: "tasker-sync 2\n"), 12, "unsupported_version"),
    ]
    for (tampered, status, outcome) in cases {
      #expect(tampered != text)
      try solo.a.setVaultItem(name, Array(tampered.utf8), deviceOnly: true)
      try expectRefusal(
        solo.a, ["sync", "now"], status: status, messages: ["refused the vault item \(name): \(outcome)"],
        disk: solo.disk)
    }
    try solo.a.setVaultItem(name, original, deviceOnly: true)
    try solo.a.ok(["sync", "now"])
  }

  @Test func aSyncKeyItemNotAMultipleOf36BytesExits15() throws {
    let solo = try Solo()
    let name = "tasker.sync-key"
    let original = try solo.a.vaultItemBytes(name)
    #expect(original.count == 36)
    for bytes in [Array(original.prefix(35)), original + [1], original + original.prefix(35)] {
      try solo.a.setVaultItem(name, bytes, deviceOnly: false)
      try expectRefusal(
        solo.a, ["sync", "now"], status: 15, messages: ["refused the vault item \(name): malformed_sync_key"],
        disk: solo.disk)
    }
    try solo.a.setVaultItem(name, original, deviceOnly: false)
    try solo.a.ok(["sync", "now"])
  }
}

extension TestDevice {
  /// The one vault item whose name begins with `prefix`.
  func vaultItemName(prefix: String) throws -> String {
    let names = try vault().items().map(\.name).filter { $0.hasPrefix(prefix) }
    #expect(names.count == 1, "\(prefix): \(names)")
    return try #require(names.first)
  }

  /// The value of the vault item `name`.
  func vaultItemBytes(_ name: String) throws -> [UInt8] {
    try vault().item(named: name).value.withUnsafeBytes { Array($0) }
  }

  /// Replaces the item `name` with `bytes`, device-only or synchronisable,
  /// as another program with the vault open could.
  func setVaultItem(_ name: String, _ bytes: [UInt8], deviceOnly: Bool) throws {
    // An item keeps its class: one of the other class is removed first.
    try vault().removeItem(named: name)
    try vault().setItem(
      try bytes.withUnsafeBytes { try SecureBytes(copying: $0) }, named: name, label: "tampered",
      class: deviceOnly ? .afterFirstUnlockThisDeviceOnly : .afterFirstUnlock)
  }
}
