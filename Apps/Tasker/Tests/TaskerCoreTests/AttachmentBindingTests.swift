import Foundation
import TaskAttachments
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// Attachment files are named by the code and sealed for their id and
/// owner; the `file` and `key_id` columns are checked, never trusted.
@Suite("Attachment files: named by the code, bound to their id and owner")
struct AttachmentBindingTests {
  static let vectorsPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../Vectors/attachment-file-v1.json").standardized.path

  func file(_ store: TaskStore, _ name: String) -> String { store.attachmentsDirectory + "/" + name }

  func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

  func write(_ bytes: [UInt8], _ path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

  @Test func theVectors() throws {
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.vectorsPath)))
    let vectors = try #require(object as? [String: Any])
    #expect(vectors["format"] as? String == "attachment-file")
    let tests = try #require(vectors["tests"] as? [[String: Any]])
    #expect(tests.count == 23)
    let reasons = [
      "its file column is not a name Tasker makes": "file_refused",
      "it belongs to no single task or page": "owner_refused",
      "its id is not a positive number": "id_refused",
    ]
    for test in tests {
      let row = try #require(test["row"] as? [String: Any])
      let id = Int64(try #require(row["id"] as? Int))
      let result = try #require(test["result"] as? String)
      do {
        let file = try AttachmentFile.checked(
          id: id, taskID: (row["task_id"] as? Int).map(Int64.init), pageID: (row["page_id"] as? Int).map(Int64.init),
          file: try #require(row["file"] as? String))
        #expect(file.binding.rawValue == result, "case \(test["id"] ?? "")")
        #expect(file.name == test["name"] as? String, "case \(test["id"] ?? "")")
        #expect(file.record == test["record"] as? String, "case \(test["id"] ?? "")")
      } catch TaskerError.attachmentRefused(let record, let reason) {
        #expect(record == "attachment/\(id)")
        #expect(reasons[reason] == result, "case \(test["id"] ?? ""): \(reason)")
      }
    }
  }

  @Test func newFilesAreNamedByTheirIdAndIdsAreNeverReused() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    for _ in 1...2 {
      try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader([1]))
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory).sorted() == ["1", "2"])
    // A writer lowers the counter: the next id is still above every stored one.
    try store.connection.execute("UPDATE sqlite_sequence SET seq = 0 WHERE name = 'attachments'")
    #expect(try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader([1])).id == 3)
    try store.connection.execute("DELETE FROM attachments WHERE id = 3")
    #expect(try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader([1])).id == 4)
  }

  /// Issue 22, break 1, in the store: a path in `file` is refused by
  /// every reader of the row, and `deleteTask` then changes nothing.
  @Test func aFileColumnThatIsNotACodeMadeNameIsRefusedAndNothingIsRemoved() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader(Array("abc".utf8)))
    let victim = directory.path("victim")
    try write(Array("abc".utf8), victim)
    let refused = TaskerError.attachmentRefused(
      record: "attachment/1", reason: "its file column is not a name Tasker makes")
    for column in ["../victim", victim, "1.partial", "01"] {
      try store.connection.prepare("UPDATE attachments SET file = ?").run([.text(column)])
      var written = [UInt8]()
      #expect(throws: refused) { try store.readAttachment(id: 1) { written += $0 } }
      #expect(written.isEmpty)
      #expect(throws: refused) { try store.deleteTask(id: 1) }
      #expect(throws: refused) { try store.rewrapAttachments() }
      #expect(try store.keyUsage().unreadable == 1, "a refused row might use any key")
      #expect(FileManager.default.fileExists(atPath: victim))
      #expect(try store.task(id: 1).title == "t")
    }
  }

  /// Issue 22, break 3: a sealed file recorded plain is never returned
  /// raw; a plain file recorded sealed is refused too.
  @Test func sealedAndRecordedMustAgree() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    try store.setAttachmentEncryption(true)
    try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader(Array("abc".utf8)))
    try store.connection.execute("UPDATE attachments SET key_id = NULL")
    var written = [UInt8]()
    #expect(
      throws: TaskerError.attachmentRefused(
        record: "attachment/1", reason: "its file is sealed but the database records it as plain")
    ) { try store.readAttachment(id: 1) { written += $0 } }
    #expect(written.isEmpty)

    try store.connection.execute("UPDATE attachments SET key_id = '00000000'")
    try write(Array("abc".utf8), file(store, "1"))
    #expect(
      throws: TaskerError.attachmentRefused(
        record: "attachment/1", reason: "its file is plain but the database records it as sealed")
    ) { try store.readAttachment(id: 1) { written += $0 } }
    #expect(written.isEmpty)
  }

  /// Issue 22, break 3: a sealed attachment moved to another owner, or
  /// two swapped, fails the commitment before anything is released.
  @Test func aMovedOrSwappedSealedAttachmentDoesNotOpen() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "one"))
    try store.addTask(TaskDraft(title: "two"))
    try store.addPage(title: "p", body: "")
    try store.setAttachmentEncryption(true)
    try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader(Array("first".utf8)))
    try store.addAttachment(to: .task(2), name: "b", mediaType: "text/plain", read: chunkedReader(Array("other".utf8)))
    let moved = TaskerError.attachment(record: "attachment/1/task/2", cause: .crypto(.commitmentMismatch))
    try store.connection.execute("UPDATE attachments SET task_id = 2 WHERE id = 1")
    #expect(throws: moved) { try store.attachmentContent(1) }
    try store.connection.execute("UPDATE attachments SET task_id = NULL, page_id = 1 WHERE id = 1")
    #expect(throws: TaskerError.attachment(record: "attachment/1/page/1", cause: .crypto(.commitmentMismatch))) {
      try store.attachmentContent(1)
    }
    try store.connection.execute("UPDATE attachments SET task_id = 1, page_id = NULL WHERE id = 1")
    #expect(try store.attachmentContent(1) == Array("first".utf8))

    let first = try bytes(file(store, "1"))
    try write(try bytes(file(store, "2")), file(store, "1"))
    try write(first, file(store, "2"))
    var written = [UInt8]()
    #expect(throws: TaskerError.attachment(record: "attachment/1/task/1", cause: .crypto(.commitmentMismatch))) {
      try store.readAttachment(id: 1) { written += $0 }
    }
    #expect(written.isEmpty)
  }

  /// Issue 22, break 3: key usage and rewrap go by the key a file's
  /// wrapper carries, so an older file put back is still counted.
  @Test func keyUsageAndRewrapGoByWhatTheFilesCarry() throws {
    let directory = try TemporaryDirectory()
    var keyring = try Keyring.generate()
    let old = keyring.primaryID
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    try store.addTask(TaskDraft(title: "t"))
    try store.setAttachmentEncryption(true)
    let content = SecureRandom.bytes(count: 40_000)
    try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader(content))
    let before = try bytes(file(store, "1"))
    try keyring.rotate()
    let rotated = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    #expect(try rotated.rewrapAttachments() == 1)
    #expect(try rotated.keyUsage().keys == [KeyUsage(keyID: keyring.primaryID.hex, attachments: 1)])

    try write(before, file(store, "1"))
    #expect(try rotated.keyUsage().keys == [KeyUsage(keyID: old.hex, attachments: 1)])
    #expect(try rotated.rewrapAttachments() == 1, "re-sealed by the key it carries, whatever key_id says")
    #expect(try rotated.keyUsage().keys == [KeyUsage(keyID: keyring.primaryID.hex, attachments: 1)])
    try keyring.retire(old)
    #expect(try TaskStore(databasePath: directory.path("t.db"), keys: keyring).attachmentContent(1) == content)

    // A missing file or a wrapper of an unknown version might use any key.
    try write(Attachment.magic + [2, 0, 0, 0, 0], file(store, "1"))
    #expect(try rotated.keyUsage().unreadable == 1)
    try FileManager.default.removeItem(atPath: file(store, "1"))
    #expect(try rotated.keyUsage().unreadable == 1)
  }

  /// Rows written before the current binding (files named by 32 random
  /// hex digits, sealed for `attachment/<file>`) keep opening; rewrap
  /// re-seals a sealed one for its id and owner (then a move is detected),
  /// and leaves a plain one as it is; delete removes both.
  @Test func legacyRowsKeepWorking() throws {
    let directory = try TemporaryDirectory()
    var keyring = try Keyring.generate()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    try store.addTask(TaskDraft(title: "t"))
    try store.addAttachment(to: .task(1), name: "new", mediaType: "text/plain", read: chunkedReader([9]))
    let plainName = String(repeating: "ab", count: 16)
    let sealedName = String(repeating: "0f", count: 16)
    let content = SecureRandom.bytes(count: 20_000)
    try write(content, directory.path("source"))
    try write(Array("plain".utf8), file(store, plainName))
    _ = try Attachment.seal(
      file: directory.path("source"), to: file(store, sealedName), using: keyring, record: "attachment/" + sealedName)
    try store.connection.execute(
      """
      INSERT INTO attachments (task_id, name, byte_count, media_type, file, key_id, created_at) VALUES
        (1, 'old plain', 5, 'text/plain', '\(plainName)', NULL, 0),
        (1, 'old sealed', \(content.count), 'text/plain', '\(sealedName)', '\(keyring.primaryID.hex)', 0)
      """)
    #expect(try store.attachmentContent(2) == Array("plain".utf8))
    #expect(try store.attachmentContent(3) == content)
    try keyring.rotate()
    let rotated = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    // An altered legacy file stops the upgrade: the row and its file stay, no new file is left.
    let legacy = try bytes(file(store, sealedName))
    var altered = legacy
    altered[altered.count - 1] ^= 1
    try write(altered, file(store, sealedName))
    #expect(throws: TaskerError.self) { try rotated.rewrapAttachments() }
    #expect(!FileManager.default.fileExists(atPath: file(store, "3")))
    #expect(!FileManager.default.fileExists(atPath: file(store, "3.partial")))
    try write(legacy, file(store, sealedName))
    // A leftover of an interrupted upgrade (no row names it) is replaced.
    try write(Array("leftover".utf8), file(store, "3"))
    #expect(try rotated.rewrapAttachments() == 1)
    #expect(try rotated.keyUsage().keys == [KeyUsage(keyID: keyring.primaryID.hex, attachments: 1)])
    #expect(try rotated.attachmentContent(3) == content)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory).sorted() == ["1", "3", plainName])
    #expect(try rotated.rewrapAttachments() == 0)
    try rotated.addTask(TaskDraft(title: "other"))
    try rotated.connection.execute("UPDATE attachments SET task_id = 2 WHERE id = 3")
    #expect(throws: TaskerError.attachment(record: "attachment/3/task/2", cause: .crypto(.commitmentMismatch))) {
      try rotated.attachmentContent(3)
    }
    try rotated.connection.execute("UPDATE attachments SET task_id = 1 WHERE id = 3")
    #expect(try rotated.attachmentContent(2) == Array("plain".utf8))
    try rotated.deleteTask(id: 1)
    #expect(try FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory).isEmpty)
  }

  /// Issue 22, break 7, in the store: `writeAttachment(toNewFile:)` never
  /// shows content under the real name before it is complete, never
  /// replaces a file, and leaves nothing on failure.
  @Test func writingToANewFileAppearsWholeOrNotAtAll() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    try store.setAttachmentEncryption(true)
    let content = SecureRandom.bytes(count: 100_000)
    try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader(content))
    let out = directory.path("out")
    try store.writeAttachment(id: 1, toNewFile: out)
    #expect(try bytes(out) == content)
    #expect(try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int == 0o600)
    #expect(throws: TaskerError.outputExists(path: out)) {
      try store.writeAttachment(id: 1, toNewFile: out)
    }
    #expect(try bytes(out) == content)

    var sealed = try bytes(file(store, "1"))
    sealed[sealed.count - 20] ^= 1
    try write(sealed, file(store, "1"))
    let failed = directory.path("failed")
    #expect(throws: TaskerError.self) { try store.writeAttachment(id: 1, toNewFile: failed) }
    let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("failed") }
    #expect(left.isEmpty, "\(left)")
  }
}
