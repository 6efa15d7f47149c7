import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// The store side of `tasker undo` for the user's own deletes and edits:
/// a copy kept with the change, bound to its receipt, put back as stored.
@Suite("Undo of the user's own changes: kept copies, restore, revert, purge")
struct UndoTests {
  let directory: TemporaryDirectory
  let keyring: Keyring
  let store: TaskStore

  init() throws {
    directory = try TemporaryDirectory()
    (keyring, store) = try directory.newStore()
  }

  /// The stored columns of task `id`, exactly as in the database.
  func storedTask(_ id: Int64) throws -> [String]? {
    try store.connection.prepare(
      "SELECT \(TaskStore.keptTaskColumns) FROM tasks WHERE id = ?"
    ).first([.integer(id)]) { row in (0..<11).map { row.optionalText(Int32($0)) ?? "NULL" } }
  }

  func count(_ table: String) throws -> Int64 {
    try store.connection.prepare("SELECT count(*) FROM \(table)").first { $0.integer(0) } ?? -1
  }

  /// Whether the raw database files (`tasker.db`, `-wal`) hold `text`.
  func filesHold(_ text: String) -> Bool {
    ["", "-wal"].contains { suffix in
      (FileManager.default.contents(atPath: directory.path("t.db") + suffix) ?? Data())
        .range(of: Data(text.utf8)) != nil
    }
  }

  @Test func aDeletedTaskComesBackAsItWasWithItsAttachments() throws {
    var draft = TaskDraft(title: "Call Bob", notes: "canary-notes")
    draft.priority = .high
    draft.contexts = "@phone"
    try store.addTask(draft)
    try store.completeTask(id: 1)
    let content = Array("attached bytes".utf8)
    try store.addAttachment(to: .task(1), name: "a.txt", mediaType: "text/plain", read: chunkedReader(content))
    let before = try #require(try storedTask(1))

    let receipt = try store.deleteTask(id: 1, keepingCopyAs: .user)
    #expect(receipt.actor == .user && receipt.tool == .deleteTask && receipt.decision == .changed)
    #expect(receipt.target == "task/1" && receipt.undo == ReceiptUndo(.restoreTask, 1))
    #expect(receipt.summary == "deleted task 1 'Call Bob'")
    #expect(!receipt.summary.contains("canary"), "no note text in receipts")
    #expect(throws: TaskerError.notFound(kind: .task, id: 1)) { try store.task(id: 1) }
    #expect(try store.attachments().isEmpty)
    #expect(FileManager.default.fileExists(atPath: store.attachmentsDirectory + "/1"), "kept until purged")
    #expect(try store.undoableChanges().map(\.id) == [receipt.id])
    var report = Diagnosis()
    store.checkAttachments(into: &report)
    #expect(!report.findings.contains { $0.code == .attachmentFileOrphan }, "doctor knows the kept file")

    let undone = try store.undo(receipt: receipt.id)
    #expect(undone.tool == .undo && undone.decision == .undone && undone.undoes == receipt.id)
    #expect(undone.summary == "undid r\(receipt.id): restored task 1")
    #expect(try storedTask(1) == before, "every column as stored, the sealed notes byte for byte")
    #expect(try store.task(id: 1).notes == "canary-notes")
    #expect(try store.attachmentContent(1) == content)
    #expect(try count("gate_undo_tasks") == 0 && count("gate_undo_attachments") == 0, "the copy is dropped")
    #expect(try store.undoableChanges().isEmpty)
    #expect(throws: TaskerError.alreadyUndone(receipt: receipt.id, by: undone.id)) {
      try store.undo(receipt: receipt.id)
    }
  }

  @Test func deleteAndRestoreNeverOpenTheNotes() throws {
    try store.addTask(TaskDraft(title: "t", notes: "sealed under the first keyring"))
    // A store whose keys cannot open these notes: deleting and undoing need none.
    let stranger = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
    #expect(throws: TaskerError.self) { try stranger.task(id: 1) }
    let receipt = try stranger.deleteTask(id: 1, keepingCopyAs: .user)
    try stranger.undo(receipt: receipt.id)
    #expect(try store.task(id: 1).notes == "sealed under the first keyring")
  }

  @Test func anEditIsRevertedFieldByField() throws {
    var draft = TaskDraft(title: "Old title", notes: "old notes")
    draft.due = try CalendarDate(parsing: "2026-01-02")
    try store.addTask(draft)
    var changes = TaskChanges()
    changes.title = "New title"
    changes.notes = "new notes"
    changes.due = .some(nil)
    let receipt = try store.editTask(id: 1, changes, keepingCopyAs: .user)
    #expect(receipt.undo == ReceiptUndo(.revertEdit, 1) && receipt.summary == "edited task 1: title, notes, due")
    #expect(try store.task(id: 1).title == "New title")
    // A later change to another field stays.
    var later = TaskChanges()
    later.contexts = "@later"
    try store.editTask(id: 1, later)

    let undone = try store.undo(receipt: receipt.id)
    #expect(undone.summary == "undid r\(receipt.id): put back title, notes, due of task 1")
    let task = try store.task(id: 1)
    #expect(task.title == "Old title" && task.notes == "old notes" && task.due?.description == "2026-01-02")
    #expect(task.contexts == "@later")
    #expect(throws: TaskerError.invalidValue(field: "changes", reason: "give at least one field to change")) {
      try store.editTask(id: 1, TaskChanges(), keepingCopyAs: .user)
    }
    #expect(throws: TaskerError.notFound(kind: .task, id: 9)) {
      try store.editTask(id: 9, later, keepingCopyAs: .user)
    }
    #expect(try store.receipts().count == 2, "a refused edit leaves no receipt")
  }

  @Test func plainEarlierNotesAreSealedInTheCopyWhenEncryptionIsOn() throws {
    try store.setBodyEncryption(false)
    try store.addTask(TaskDraft(title: "t", notes: "CANARY-plain-earlier-notes"))
    try store.setBodyEncryption(true)
    #expect(filesHold("CANARY-plain-earlier-notes"), "the test can fail: the plain note is in the files")
    var changes = TaskChanges()
    changes.notes = "replaced"
    let receipt = try store.editTask(id: 1, changes, keepingCopyAs: .user)
    let kept = try store.connection.prepare("SELECT notes FROM gate_undo_tasks").first { $0.text(0) } ?? ""
    #expect(SealedValue.isSealed(kept))
    #expect(!filesHold("CANARY-plain-earlier-notes"), "no plain text outlives the edit")
    try store.undo(receipt: receipt.id)
    #expect(try store.task(id: 1).notes == "CANARY-plain-earlier-notes")
  }

  @Test func aDeletedPageComesBackWithItsAttachment() throws {
    let page = try store.addPage(title: "Plan", body: "page canary")
    try store.addAttachment(to: .page(page.id), name: "p", mediaType: "text/plain", read: chunkedReader([1, 2, 3]))
    let receipt = try store.deletePage(id: page.id, keepingCopyAs: .user)
    #expect(receipt.tool == .deletePage && receipt.target == "page/1" && receipt.undo == ReceiptUndo(.restorePage, 1))
    #expect(try store.pages().isEmpty)
    try store.undo(receipt: receipt.id)
    #expect(try store.page(id: 1) == page)
    #expect(try store.attachmentContent(1) == [1, 2, 3])
    #expect(throws: TaskerError.notFound(kind: .page, id: 5)) { try store.deletePage(id: 5, keepingCopyAs: .user) }
  }

  @Test func purgingDropsTheCopiesTheirFilesAndTheirBytes() throws {
    try store.addTask(TaskDraft(title: "one", notes: "n1"))
    try store.addTask(TaskDraft(title: "two", notes: "n2"))
    try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader([7]))
    let sealed = try store.connection.prepare("SELECT notes FROM tasks WHERE id = 1").first { $0.text(0) } ?? ""
    let first = try store.deleteTask(id: 1, keepingCopyAs: .user)
    let second = try store.deleteTask(id: 2, keepingCopyAs: .user)
    #expect(try store.purgeUndoHistory(keepingNewest: 1) == 1)
    #expect(!FileManager.default.fileExists(atPath: store.attachmentsDirectory + "/1"))
    #expect(!filesHold(String(sealed.dropFirst(14).prefix(24))), "the sealed notes are gone from the files")
    #expect(throws: TaskerError.notUndoable(receipt: first.id, reason: "its kept copy was purged")) {
      try store.undo(receipt: first.id)
    }
    #expect(try store.undoableChanges().map(\.id) == [second.id])
    #expect(try store.receipts().count == 2, "the receipts stay")
    #expect(try store.purgeUndoHistory() == 1)
    #expect(try store.purgeUndoHistory() == 0)
    #expect(try store.undoableChanges().isEmpty)
  }

  @Test func onlyTheNewestCopiesAreKept() throws {
    let total = TaskStore.maximumKeptChanges + 2
    let ids = try store.addTasks((1...total).map { TaskDraft(title: "t\($0)") })
    var receipts: [Int64] = []
    for id in ids { receipts.append(try store.deleteTask(id: id, keepingCopyAs: .user).id) }
    #expect(try count("gate_undo_tasks") == Int64(TaskStore.maximumKeptChanges))
    #expect(throws: TaskerError.notUndoable(receipt: receipts[0], reason: "its kept copy was purged")) {
      try store.undo(receipt: receipts[0])
    }
    try store.undo(receipt: receipts[2])
    #expect(try store.task(id: ids[2]).title == "t3")
  }

  @Test func aTaskDeletedForGoodTakesTheCopiesOfItsEditsWithIt() throws {
    try store.addTask(TaskDraft(title: "t"))
    var changes = TaskChanges()
    changes.title = "u"
    let edit = try store.editTask(id: 1, changes, keepingCopyAs: .user)
    try store.deleteTask(id: 1)
    #expect(try count("gate_undo_tasks") == 0)
    #expect(throws: TaskerError.notUndoable(receipt: edit.id, reason: "its kept copy was purged")) {
      try store.undo(receipt: edit.id)
    }
  }

  @Test func aReceiptWithoutUndoOrUnknownIsRefused() throws {
    #expect(throws: TaskerError.receiptNotFound(id: 4)) { try store.undo(receipt: 4) }
    try store.appendReceipt(
      GateReceipt(
        actor: .trusted, keyID: nil, assistant: nil, tool: .editTask, decision: .allow, target: "task/1",
        summary: "edited"))
    #expect(throws: TaskerError.notUndoable(receipt: 1, reason: "edit_task with decision allow has no undo")) {
      try store.undo(receipt: 1)
    }
  }

  @Test func aKeptCopyTheDatabaseAlteredIsRefused() throws {
    try store.addTask(TaskDraft(title: "t"))
    var changes = TaskChanges()
    changes.title = "u"
    let edit = try store.editTask(id: 1, changes, keepingCopyAs: .user)
    try store.connection.execute("UPDATE gate_undo_tasks SET fields = 'title,id'")
    #expect(
      throws: TaskerError.notUndoable(receipt: edit.id, reason: "its kept copy names a field Tasker does not keep")
    ) {
      try store.undo(receipt: edit.id)
    }
    try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader([1]))
    let deleted = try store.deleteTask(id: 1, keepingCopyAs: .user)
    try store.connection.execute("UPDATE gate_undo_attachments SET task_id = 99")
    #expect(throws: TaskerError.self) { try store.undo(receipt: deleted.id) }
    #expect(throws: TaskerError.notFound(kind: .task, id: 1)) { try store.task(id: 1) }
    #expect(try store.receipt(undoing: deleted.id) == nil, "a refused undo writes nothing")
  }

  @Test func theKeyCommandsSeeTheKeptNotes() throws {
    try store.addTask(TaskDraft(title: "t", notes: "kept notes"))
    let primary = keyring.primary.id.hex
    try store.deleteTask(id: 1, keepingCopyAs: .user)
    #expect(try store.keyUsage().keys.first { $0.keyID == primary }?.taskNotes == 1, "counted while kept")
    #expect(try store.approvalSealedRecords().map(\.record) == ["task/1/notes"])
  }
}
