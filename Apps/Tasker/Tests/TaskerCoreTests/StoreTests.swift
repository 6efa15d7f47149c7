import Foundation
import TaskCrypto
import TaskVault
import TaskerTestSupport
import Testing

@testable import TaskerCore

@Suite struct StoreTests {
  @Test func tasksRoundTripWithEveryField() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    var draft = TaskDraft(title: "Write report", notes: "draft in docs/")
    draft.due = try CalendarDate(parsing: "2026-12-24")
    draft.estimateMinutes = 90
    draft.priority = .high
    draft.energy = .low
    draft.contexts = "@work deep"
    let added = try store.addTask(draft)
    #expect(added.id == 1)
    #expect(added.notes == "draft in docs/")
    #expect(added.due?.description == "2026-12-24")
    #expect(added.estimateMinutes == 90)
    #expect(added.priority == .high)
    #expect(added.energy == .low)
    #expect(added.contexts == "@work deep")
    #expect(added.status == .open)

    var changes = TaskChanges()
    changes.notes = "final in docs/"
    changes.due = .some(nil)
    changes.energy = .some(.high)
    let edited = try store.editTask(id: 1, changes)
    #expect(edited.notes == "final in docs/")
    #expect(edited.due == nil)
    #expect(edited.energy == .high)
    #expect(edited.title == "Write report")

    try store.completeTask(id: 1)
    #expect(try store.tasks(.open).count == 0)
    #expect(try store.tasks(.done).map(\.id) == [1])
    #expect(try store.task(id: 1).completed != nil)
    try store.reopenTask(id: 1)
    #expect(try store.tasks(.open).map(\.id) == [1])
    #expect(try store.task(id: 1).completed == nil)

    try store.deleteTask(id: 1)
    #expect(throws: TaskerError.notFound(kind: .task, id: 1)) { try store.task(id: 1) }
    // Ids are never reused, so a sealed value of a deleted task can never open as another's.
    #expect(try store.addTask(TaskDraft(title: "next")).id == 2)
  }

  @Test func addTasksIsAllOrNothing() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    let first = TaskDraft(title: "one", notes: "n1")
    let second = TaskDraft(title: "two", notes: "n2")
    #expect(try store.addTasks([first, second]) == [1, 2])
    #expect(try store.task(id: 2).notes == "n2")
    #expect(throws: TaskerError.invalidValue(field: "title", reason: "a title must not be empty")) {
      try store.addTasks([first, TaskDraft(title: "")])
    }
    let huge = TaskDraft(title: "huge", notes: String(repeating: "x", count: SealedValue.maximumPlaintextByteCount + 1))
    #expect(throws: TaskerError.self) { try store.addTasks([first, huge]) }
    #expect(try store.tasks(.all).map(\.id) == [1, 2])
  }

  @Test func bodiesAreSealedAndBoundToTheirRecord() throws {
    let directory = try TemporaryDirectory()
    let (keyring, store) = try directory.newStore()
    var draft = TaskDraft(title: "a", notes: "alpha notes")
    try store.addTask(draft)
    draft.notes = "beta notes"
    try store.addTask(draft)
    let page = try store.addPage(title: "Plan", body: "page body")

    let notes = try store.connection.prepare("SELECT notes FROM tasks ORDER BY id").rows { $0.text(0) }
    let body = try store.connection.prepare("SELECT body FROM pages").first { $0.text(0) }
    #expect(notes.allSatisfy { $0.hasPrefix("tc1.\(keyring.primaryID.hex):") }, "\(notes)")
    #expect(body?.hasPrefix("tc1.") ?? false)
    #expect(try SealedValue.open(notes[0], using: keyring, context: "task/1/notes") == "alpha notes")
    #expect(try SealedValue.open(body!, using: keyring, context: "page/\(page.id)/body") == "page body")

    // Move task 1's sealed notes onto task 2: they must not open there.
    try store.connection.prepare("UPDATE tasks SET notes = ? WHERE id = 2").run([.text(notes[0])])
    #expect(throws: TaskerError.sealedBodyUnreadable(record: "task/2/notes", cause: .authenticationFailed)) {
      try store.task(id: 2)
    }
  }

  @Test func plainBodiesOpenUnchangedAndNeedNoKey() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("t.db")
    let writer = try TaskStore(databasePath: path, keys: try Keyring.generate())
    try writer.setBodyEncryption(false)
    let draft = TaskDraft(title: "old", notes: "tc2. call Bob")
    try writer.addTask(draft)
    try writer.addPage(title: "p", body: "plain body")
    #expect(try writer.connection.prepare("SELECT notes FROM tasks").first { $0.text(0) } == "tc2. call Bob")

    // A store whose vault is missing still opens plain bodies.
    let reader = try TaskStore(databasePath: path, keys: VaultKeySource(directory: directory.path("no-vault")))
    #expect(try reader.task(id: 1).notes == "tc2. call Bob")
    #expect(try reader.page(id: 1).body == "plain body")
  }

  @Test func lockedVaultWritesNothing() throws {
    let device = try TestDevice(unlock: false)
    let store = try device.store()
    try store.addTask(TaskDraft(title: "no notes need no key"))
    let draft = TaskDraft(title: "with notes", notes: "secret")
    #expect(throws: TaskerError.vaultLocked(reason: .notUnlocked)) { try store.addTask(draft) }
    #expect(throws: TaskerError.vaultLocked(reason: .notUnlocked)) { try store.addPage(title: "p", body: "secret") }
    var changes = TaskChanges()
    changes.notes = "secret"
    changes.title = "renamed"
    #expect(throws: TaskerError.vaultLocked(reason: .notUnlocked)) { try store.editTask(id: 1, changes) }
    #expect(try store.tasks(.all).map(\.title) == ["no notes need no key"])
    #expect(try store.pages().count == 0)
    #expect(try store.connection.prepare("SELECT count(*) FROM tasks").first { $0.integer(0) } == 1)
  }

  @Test func vaultKeysSealAndOpenThroughTheLibrary() throws {
    let device = try TestDevice()
    let draft = TaskDraft(title: "t", notes: "from the vault")
    try device.store().addTask(draft)
    let keyring = try device.vault().noteKeyring()
    let stored = try device.store().connection.prepare("SELECT notes FROM tasks").first { $0.text(0) }!
    #expect(try SealedValue.keyID(of: stored) == keyring.primaryID)
    #expect(try device.store().task(id: 1).notes == "from the vault")
    try device.vault().lock()
    #expect(throws: TaskerError.vaultLocked(reason: .notUnlocked)) { try device.store().task(id: 1) }
    // Titles stay readable while locked.
    #expect(try device.store().tasks().map(\.title) == ["t"])
  }

  @Test func searchMatchesTitlesAndContextsLiterally() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    var draft = TaskDraft(title: "Pay 100% of rent", notes: "bank")
    try store.addTask(draft)
    draft = TaskDraft(title: "Call mum")
    draft.contexts = "@phone"
    try store.addTask(draft)
    try store.addTask(TaskDraft(title: "Pay 1000 of x"))
    #expect(try store.searchTasks("100%").map(\.id) == [1])
    #expect(try store.searchTasks("PHONE").map(\.id) == [2])
    #expect(try store.searchTasks("bank").map(\.id) == [], "notes are sealed and never searched")
  }

  @Test func invalidValuesAreRefusedBeforeWriting() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    #expect(throws: TaskerError.invalidValue(field: "title", reason: "a title must not be empty")) {
      try store.addTask(TaskDraft(title: "  "))
    }
    #expect(throws: TaskerError.self) { try CalendarDate(parsing: "2026-02-30") }
    #expect(throws: TaskerError.self) { try CalendarDate(parsing: "2026-1-01") }
    #expect(try CalendarDate(parsing: "2024-02-29").description == "2024-02-29")
    #expect(throws: TaskerError.notFound(kind: .task, id: 9)) { try store.editTask(id: 9, TaskChanges()) }
    #expect(try store.tasks(.all).count == 0)
  }
}
