import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// Schema version 10 (TaskStore+SyncAttachments.swift): a version 9
/// database keeps its sync rows, and attachment rows are noted from then on.
@Suite struct SyncAttachmentSchemaTests {
  /// A database at version 9 with one task, one attachment row and sync rows.
  func versionNine(_ path: String) throws {
    let connection = try Connection(path: path, create: true)
    for step in Schema.migrations.prefix(9) { try connection.execute(step) }
    try connection.execute(
      """
      PRAGMA user_version = 9;
      INSERT INTO tasks (id, title, created_at) VALUES (1, 'kept', 0);
      INSERT INTO attachments (id, task_id, name, byte_count, media_type, file, created_at)
        VALUES (1, 1, 'a.txt', 3, 'text/plain', '1', 0);
      INSERT INTO sync_records (kind, uid, local_id, state)
        VALUES ('task', '00112233445566778899aabbccddeeff', 1, '{}');
      DELETE FROM sync_dirty;
      INSERT INTO sync_dirty (kind, local_id) VALUES ('page', 7);
      """)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
  }

  @Test func versionNineMigratesKeepingItsSyncRows() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("t.db")
    try versionNine(path)
    let store = try TaskStore(databasePath: path, keys: try Keyring.generate())
    let connection = store.connection
    #expect(try connection.prepare("PRAGMA user_version").first { $0.integer(0) } == Int64(Schema.current))
    #expect(
      try connection.prepare("SELECT kind || ' ' || uid || ' ' || local_id FROM sync_records").first { $0.text(0) }
        == "task 00112233445566778899aabbccddeeff 1")
    let dirty = {
      try connection.prepare("SELECT kind || ' ' || local_id FROM sync_dirty ORDER BY 1").rows { $0.text(0) }
    }
    #expect(try dirty() == ["page 7"])
    #expect(try store.attachment(id: 1).remote == false, "an existing row is local")

    // The triggers are back for tasks and pages, and new for attachments.
    try connection.execute("UPDATE tasks SET title = 'edited' WHERE id = 1")
    try connection.execute("DELETE FROM attachments WHERE id = 1")
    #expect(try dirty() == ["attachment 1", "page 7", "task 1"])
    // A kind the format does not have is refused.
    #expect(throws: TaskerError.self) {
      try connection.execute(
        "INSERT INTO sync_records (kind, uid, local_id, state) VALUES ('note', '\(String(repeating: "a", count: 32))', NULL, '{}')"
      )
    }
  }

  @Test func aRemoteAttachmentIsNotReadAsLocal() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    let task = try store.addTask(TaskDraft(title: "owner"))
    let id = try store.withSyncTransaction { rows in
      try rows.addRemoteAttachment(
        SyncAttachmentRow(
          owner: .task(task.id), name: "r.bin", mediaType: "application/octet-stream", byteCount: 5, createdAt: 0,
          remote: true))
    }
    #expect(try store.attachment(id: id).remote)
    #expect(throws: TaskerError.attachmentNotFetched(id: id)) { try store.readAttachment(id: id) { _ in } }
    #expect(throws: TaskerError.attachmentNotFetched(id: id)) { _ = try store.attachmentContent(id: id) }
    #expect(try store.withSyncTransaction { try $0.everyDirty() }.contains { $0.kind == "attachment" } == false)
    // The fetched content must be exactly the recorded length; nothing is kept otherwise.
    var given = false
    #expect(throws: TaskerError.self) {
      try store.keepFetchedAttachment(id: id) {
        defer { given = true }
        return given ? [] : Array("four".utf8)
      }
    }
    #expect(try store.attachment(id: id).remote)
    given = false
    try store.keepFetchedAttachment(id: id) {
      defer { given = true }
      return given ? [] : Array("fives".utf8)
    }
    #expect(try store.attachment(id: id).remote == false)
    var read: [UInt8] = []
    try store.readAttachment(id: id) { read += $0 }
    #expect(read == Array("fives".utf8))
    #expect(throws: TaskerError.self) { try store.keepFetchedAttachment(id: id) { [] } }
  }
}
