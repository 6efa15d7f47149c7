import TaskerTestSupport
import Testing

@testable import TaskerCore

/// `TaskStore.withSyncApplyTransaction`: what it writes to tasks and pages
/// is not marked as changed here, ids count on as AUTOINCREMENT would
/// choose them, and every local change before and after is still marked.
@Suite struct SyncApplyTransactionTests {
  func dirty(_ store: TaskStore) throws -> [String] {
    try store.withSyncTransaction { try $0.everyDirty() }.map { "\($0.kind) \($0.localID)" }
  }

  @Test func rowsAppliedAreNotMarkedAndLocalChangesStillAre() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    let local = try store.addTask(TaskDraft(title: "local"))
    try store.withSyncTransaction { try $0.clearAllDirty() }
    // A deleted task's id is never used again: the next ids are above it.
    let gone = try store.addTask(TaskDraft(title: "gone"))
    _ = try store.removeTaskRows(gone.id)
    try store.withSyncTransaction { try $0.clearAllDirty() }
    let ids = try store.withSyncApplyTransaction { rows in
      try (0..<3).map { number in
        try rows.writeRow(
          kind: "task", localID: nil, fields: ["title": .string("applied \(number)"), "created_at": .integer(1)],
          body: "note \(number)")
      }
        + [try rows.writeRow(kind: "page", localID: nil, fields: ["title": .string("page")], body: "body")]
    }
    #expect(ids.prefix(3) == [gone.id + 1, gone.id + 2, gone.id + 3])
    #expect(try dirty(store).isEmpty, "nothing applied is a local change")
    // An applied row changed again, and a local edit: only the local edit is marked.
    try store.withSyncApplyTransaction { rows in
      _ = try rows.writeRow(kind: "task", localID: ids[0], fields: ["title": .string("applied again")], body: nil)
    }
    #expect(try dirty(store).isEmpty)
    try store.connection.execute("UPDATE tasks SET title = 'edited' WHERE id = \(local.id)")
    try store.connection.execute("UPDATE tasks SET priority = 2 WHERE id = \(ids[1])")
    #expect(try dirty(store) == ["task \(local.id)", "task \(ids[1])"])
    #expect(try store.task(id: ids[0]).title == "applied again")
    #expect(try store.task(id: ids[2]).notes == "note 2")
  }

  @Test func aFailedApplyWritesNothingAndLeavesTheTriggersOn() throws {
    struct Stop: Error {}
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    #expect(throws: Stop.self) {
      try store.withSyncApplyTransaction { rows in
        _ = try rows.writeRow(kind: "task", localID: nil, fields: ["title": .string("never")], body: "")
        throw Stop()
      }
    }
    #expect(try store.connection.prepare("SELECT count(*) FROM tasks").first { $0.integer(0) } == 0)
    let added = try store.addTask(TaskDraft(title: "after"))
    #expect(try dirty(store) == ["task \(added.id)"])
  }
}
