import Foundation
import TaskerTestSupport
import Testing

/// The outbox's files (`tasker.db.sync-outbox/`), end to end through a
/// folder: an object waits in its file until it is at the storage, is sent
/// only as the bytes its row names, and its file goes once it is there.
@Suite("Sync: the outbox's files")
struct SyncOutboxTests {
  @Test func anOutboxFileAlteredBeforeItsUploadExits52AndSendsNothingUntilItIsPutBack() throws {
    // A home set up with a folder, a task synced.
    let solo = try SyncErrorPathTests.Solo()
    let (folder, a) = (solo.folder, solo.a)
    let aID = try a.syncDeviceID()
    let outbox = a.root.path("tasker/tasker.db.sync-outbox")
    #expect(try FileManager.default.contentsOfDirectory(atPath: outbox).isEmpty, "an uploaded object's file goes")

    // The storage refuses the upload (its folder for A is a symlink): the new object waits in the outbox.
    let objects = folder.path + "/tasker-sync/d/" + aID
    try FileManager.default.moveItem(atPath: objects, toPath: folder.path + "/away")
    try FileManager.default.createSymbolicLink(atPath: objects, withDestinationPath: folder.path + "/away")
    try a.ok(["add", "waiting", "--notes", "-"], input: "a waiting note")
    #expect(try a.tasker(["sync", "now"]).status == 77)
    try FileManager.default.removeItem(atPath: objects)
    try FileManager.default.moveItem(atPath: folder.path + "/away", toPath: objects)
    let names = try FileManager.default.contentsOfDirectory(atPath: outbox)
    try #require(names.count == 1, "\(names)")
    let path = outbox + "/" + names[0]
    let seq = try #require(Int(names[0], radix: 16))
    let original = try fileBytes(path)

    var altered = original
    altered[altered.count / 2] ^= 0x01
    try Data(altered).write(to: URL(fileURLWithPath: path))
    let refused = try a.tasker(["sync", "now"])
    #expect(refused.status == 52, "\(refused.stderr)")
    #expect(refused.stderr.contains("object \(seq) waiting to be sent is missing or altered at \(path)"))
    #expect(refused.stderr.contains("tasker sync off"), "\(refused.stderr)")
    #expect(!FileManager.default.fileExists(atPath: objects + "/" + seqName(seq)), "nothing of it was sent")

    try Data(original).write(to: URL(fileURLWithPath: path))
    try a.ok(["sync", "now"])
    #expect(try fileBytes(objects + "/" + seqName(seq)) == original)
    #expect(try FileManager.default.contentsOfDirectory(atPath: outbox).isEmpty)
    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    #expect(try b.taskTitles().sorted() == ["synced", "waiting"])
  }
}
