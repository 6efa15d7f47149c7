import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// `removeAttachment(id:)` and `deletePageWithAttachments(id:)`: rows in one
/// transaction, files named by the code removed after the commit.
@Suite struct AttachmentRemovalTests {
  func files(_ store: TaskStore) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory).sorted()
  }

  func add(_ store: TaskStore, to owner: AttachmentOwner, _ text: String) throws {
    try store.addAttachment(to: owner, name: text, mediaType: "text/plain", read: chunkedReader(Array(text.utf8)))
  }

  @Test func removingAnAttachmentTakesItsRowAndItsFileOnly() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    try add(store, to: .task(1), "one")
    try store.setAttachmentEncryption(true)
    try add(store, to: .task(1), "two")
    #expect(try files(store) == ["1", "2"])
    let removed = try store.removeAttachment(id: 2)
    #expect(removed.name == "two" && removed.sealed)
    #expect(try store.attachments().map(\.id) == [1])
    #expect(try files(store) == ["1"])
    #expect(try store.attachmentContent(1) == Array("one".utf8))
    #expect(throws: TaskerError.notFound(kind: .attachment, id: 2)) { try store.removeAttachment(id: 2) }
    #expect(throws: TaskerError.notFound(kind: .attachment, id: 99)) { try store.removeAttachment(id: 99) }
    #expect(try store.task(id: 1).title == "t", "the task stays")
  }

  @Test func aRowWhoseFileColumnPointsElsewhereIsRefusedAndNothingIsRemoved() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    try add(store, to: .task(1), "one")
    let victim = directory.path("victim")
    try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
    for hostile in ["../victim", victim, "1/../../victim", "2"] {
      try store.connection.prepare("UPDATE attachments SET file = ? WHERE id = 1").run([.text(hostile)])
      #expect(
        throws: TaskerError.attachmentRefused(
          record: "attachment/1", reason: "its file column is not a name Tasker makes")
      ) { try store.removeAttachment(id: 1) }
      #expect(FileManager.default.fileExists(atPath: victim), "\(hostile)")
      #expect(try store.attachments().map(\.id) == [1], "the row stays")
      #expect(try files(store) == ["1"])
    }
    // Put right, it goes, and the file the code names goes with it.
    try store.connection.execute("UPDATE attachments SET file = '1' WHERE id = 1")
    try store.removeAttachment(id: 1)
    #expect(try files(store).isEmpty)
    #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: victim)), as: UTF8.self) == "keep me")
  }

  @Test func removalLeavesNoCopyOfTheRowInTheLog() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    try add(store, to: .task(1), "a-name-to-forget-0123456789")
    try store.removeAttachment(id: 1)
    #expect(!store.logKeptByReader)
    let wal = (try? Data(contentsOf: URL(fileURLWithPath: directory.path("t.db-wal")))) ?? Data()
    #expect(wal.isEmpty, "the log was truncated")
    let database = try Data(contentsOf: URL(fileURLWithPath: directory.path("t.db")))
    #expect(database.range(of: Data("a-name-to-forget-0123456789".utf8)) == nil, "secure_delete zeroed the row")
  }

  @Test func deletingAPageTakesItsBodyAndItsAttachmentsInOneGo() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    try store.addPage(title: "keep", body: "other body")
    try store.addPage(title: "drop-this-page-title-0123456789", body: "a body to forget")
    try add(store, to: .page(2), "p2-a")
    try add(store, to: .page(2), "p2-b")
    try add(store, to: .page(1), "p1")
    try add(store, to: .task(1), "t1")
    #expect(try files(store) == ["1", "2", "3", "4"])
    #expect(try store.deletePageWithAttachments(id: 2) == [1, 2])
    #expect(try store.pages().map(\.id) == [1])
    #expect(try store.attachments().map(\.id) == [3, 4])
    #expect(try files(store) == ["3", "4"])
    #expect(throws: TaskerError.notFound(kind: .page, id: 2)) { try store.page(id: 2) }
    #expect(throws: TaskerError.notFound(kind: .page, id: 2)) { try store.deletePageWithAttachments(id: 2) }
    let wal = (try? Data(contentsOf: URL(fileURLWithPath: directory.path("t.db-wal")))) ?? Data()
    #expect(wal.isEmpty)
    let database = try Data(contentsOf: URL(fileURLWithPath: directory.path("t.db")))
    #expect(database.range(of: Data("drop-this-page-title-0123456789".utf8)) == nil)
    #expect(try store.deletePageWithAttachments(id: 1) == [3])
    #expect(try files(store) == ["4"])
  }

  @Test func aPageWithARefusedAttachmentRowIsNotDeleted() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addPage(title: "p", body: "b")
    try add(store, to: .page(1), "a")
    try add(store, to: .page(1), "b")
    let victim = directory.path("victim")
    try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
    try store.connection.execute("UPDATE attachments SET file = '../victim' WHERE id = 2")
    #expect(
      throws: TaskerError.attachmentRefused(
        record: "attachment/2", reason: "its file column is not a name Tasker makes")
    ) { try store.deletePageWithAttachments(id: 1) }
    #expect(try store.page(id: 1).body == "b", "nothing was deleted")
    #expect(try store.attachments().map(\.id) == [1, 2])
    #expect(try files(store) == ["1", "2"])
    #expect(FileManager.default.fileExists(atPath: victim))
  }

  @Test func showReachesCreatedCompletedAndAttachments() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    let before = Int64(Date().timeIntervalSince1970)
    try store.addTask(TaskDraft(title: "t"))
    try add(store, to: .task(1), "note.txt")
    #expect(try store.task(id: 1, openingNotes: false).completed == nil)
    try store.completeTask(id: 1)
    let task = try store.task(id: 1, openingNotes: false)
    #expect(task.created >= before && task.created <= Int64(Date().timeIntervalSince1970))
    #expect(try #require(task.completed) >= task.created)
    #expect(try store.attachments(of: .task(task.id)).map(\.name) == ["note.txt"])
  }
}
