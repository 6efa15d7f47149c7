import Foundation
import TaskCrypto
import TaskVault
import TaskerTestSupport
import XCTest

@testable import TaskerCore

final class StoreTests: XCTestCase {
  func testTasksRoundTripWithEveryField() throws {
    let directory = try TemporaryDirectory()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
    var draft = TaskDraft(title: "Write report")
    draft.notes = "draft in docs/"
    draft.due = try CalendarDate(parsing: "2026-12-24")
    draft.estimateMinutes = 90
    draft.priority = .high
    draft.energy = .low
    draft.contexts = "@work deep"
    let added = try store.addTask(draft)
    XCTAssertEqual(added.id, 1)
    XCTAssertEqual(added.notes, "draft in docs/")
    XCTAssertEqual(added.due?.description, "2026-12-24")
    XCTAssertEqual(added.estimateMinutes, 90)
    XCTAssertEqual(added.priority, .high)
    XCTAssertEqual(added.energy, .low)
    XCTAssertEqual(added.contexts, "@work deep")
    XCTAssertEqual(added.status, .open)

    var changes = TaskChanges()
    changes.notes = "final in docs/"
    changes.due = .some(nil)
    changes.energy = .some(.high)
    let edited = try store.editTask(id: 1, changes)
    XCTAssertEqual(edited.notes, "final in docs/")
    XCTAssertNil(edited.due)
    XCTAssertEqual(edited.energy, .high)
    XCTAssertEqual(edited.title, "Write report")

    try store.completeTask(id: 1)
    XCTAssertEqual(try store.tasks(.open).count, 0)
    XCTAssertEqual(try store.tasks(.done).map(\.id), [1])
    XCTAssertNotNil(try store.task(id: 1).completed)
    try store.reopenTask(id: 1)
    XCTAssertEqual(try store.tasks(.open).map(\.id), [1])
    XCTAssertNil(try store.task(id: 1).completed)

    try store.deleteTask(id: 1)
    XCTAssertThrowsError(try store.task(id: 1)) { XCTAssertEqual($0 as? TaskerError, .notFound(kind: .task, id: 1)) }
    // Ids are never reused, so a sealed value of a deleted task can never open as another's.
    XCTAssertEqual(try store.addTask(TaskDraft(title: "next")).id, 2)
  }

  func testBodiesAreSealedAndBoundToTheirRecord() throws {
    let directory = try TemporaryDirectory()
    let keyring = try Keyring.generate()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    var draft = TaskDraft(title: "a")
    draft.notes = "alpha notes"
    try store.addTask(draft)
    draft.notes = "beta notes"
    try store.addTask(draft)
    let page = try store.addPage(title: "Plan", body: "page body")

    let notes = try store.connection.prepare("SELECT notes FROM tasks ORDER BY id").rows { $0.text(0) }
    let body = try store.connection.prepare("SELECT body FROM pages").first { $0.text(0) }
    XCTAssertTrue(notes.allSatisfy { $0.hasPrefix("tc1.\(keyring.primaryID.hex):") }, "\(notes)")
    XCTAssertTrue(body?.hasPrefix("tc1.") ?? false)
    XCTAssertEqual(try SealedValue.open(notes[0], using: keyring, context: "task/1/notes"), "alpha notes")
    XCTAssertEqual(try SealedValue.open(body!, using: keyring, context: "page/\(page.id)/body"), "page body")

    // Move task 1's sealed notes onto task 2: they must not open there.
    try store.connection.prepare("UPDATE tasks SET notes = ? WHERE id = 2").run([.text(notes[0])])
    XCTAssertThrowsError(try store.task(id: 2)) {
      XCTAssertEqual($0 as? TaskerError, .sealedBodyUnreadable(record: "task/2/notes", cause: .authenticationFailed))
    }
  }

  func testPlainBodiesOpenUnchangedAndNeedNoKey() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("t.db")
    let writer = try TaskStore(databasePath: path, keys: try Keyring.generate())
    try writer.setBodyEncryption(false)
    var draft = TaskDraft(title: "old")
    draft.notes = "tc2. call Bob"
    try writer.addTask(draft)
    try writer.addPage(title: "p", body: "plain body")
    XCTAssertEqual(try writer.connection.prepare("SELECT notes FROM tasks").first { $0.text(0) }, "tc2. call Bob")

    // A store whose vault is missing still opens plain bodies.
    let reader = try TaskStore(databasePath: path, keys: VaultKeySource(directory: directory.path("no-vault")))
    XCTAssertEqual(try reader.task(id: 1).notes, "tc2. call Bob")
    XCTAssertEqual(try reader.page(id: 1).body, "plain body")
  }

  func testLockedVaultWritesNothing() throws {
    let device = try TestDevice(unlock: false)
    let store = try device.store()
    try store.addTask(TaskDraft(title: "no notes need no key"))
    var draft = TaskDraft(title: "with notes")
    draft.notes = "secret"
    XCTAssertThrowsError(try store.addTask(draft)) {
      XCTAssertEqual($0 as? TaskerError, .vaultLocked(reason: .notUnlocked))
    }
    XCTAssertThrowsError(try store.addPage(title: "p", body: "secret")) {
      XCTAssertEqual($0 as? TaskerError, .vaultLocked(reason: .notUnlocked))
    }
    var changes = TaskChanges()
    changes.notes = "secret"
    changes.title = "renamed"
    XCTAssertThrowsError(try store.editTask(id: 1, changes))
    XCTAssertEqual(try store.tasks(.all).map(\.title), ["no notes need no key"])
    XCTAssertEqual(try store.pages().count, 0)
    XCTAssertEqual(try store.connection.prepare("SELECT count(*) FROM tasks").first { $0.integer(0) }, 1)
  }

  func testVaultKeysSealAndOpenThroughTheLibrary() throws {
    let device = try TestDevice()
    var draft = TaskDraft(title: "t")
    draft.notes = "from the vault"
    try device.store().addTask(draft)
    let keyring = try device.vault().noteKeyring()
    let stored = try device.store().connection.prepare("SELECT notes FROM tasks").first { $0.text(0) }!
    XCTAssertEqual(try SealedValue.keyID(of: stored), keyring.primaryID)
    XCTAssertEqual(try device.store().task(id: 1).notes, "from the vault")
    try device.vault().lock()
    XCTAssertThrowsError(try device.store().task(id: 1)) {
      XCTAssertEqual($0 as? TaskerError, .vaultLocked(reason: .notUnlocked))
    }
    // Titles stay readable while locked.
    XCTAssertEqual(try device.store().tasks().map(\.title), ["t"])
  }

  func testSearchMatchesTitlesAndContextsLiterally() throws {
    let directory = try TemporaryDirectory()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
    var draft = TaskDraft(title: "Pay 100% of rent")
    draft.notes = "bank"
    try store.addTask(draft)
    draft = TaskDraft(title: "Call mum")
    draft.contexts = "@phone"
    try store.addTask(draft)
    try store.addTask(TaskDraft(title: "Pay 1000 of x"))
    XCTAssertEqual(try store.searchTasks("100%").map(\.id), [1])
    XCTAssertEqual(try store.searchTasks("PHONE").map(\.id), [2])
    XCTAssertEqual(try store.searchTasks("bank").map(\.id), [], "notes are sealed and never searched")
  }

  func testInvalidValuesAreRefusedBeforeWriting() throws {
    let directory = try TemporaryDirectory()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
    XCTAssertThrowsError(try store.addTask(TaskDraft(title: "  "))) {
      XCTAssertEqual($0 as? TaskerError, .invalidValue(field: "title", reason: "a title must not be empty"))
    }
    XCTAssertThrowsError(try CalendarDate(parsing: "2026-02-30"))
    XCTAssertThrowsError(try CalendarDate(parsing: "2026-1-01"))
    XCTAssertEqual(try CalendarDate(parsing: "2024-02-29").description, "2024-02-29")
    XCTAssertThrowsError(try store.editTask(id: 9, TaskChanges())) {
      XCTAssertEqual($0 as? TaskerError, .notFound(kind: .task, id: 9))
    }
    XCTAssertEqual(try store.tasks(.all).count, 0)
  }
}
