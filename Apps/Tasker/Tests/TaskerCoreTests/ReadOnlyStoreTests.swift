import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// `TaskStore.reading`, the store of `show`, `list`, `page show` and
/// `plan-context`: read-only, no write lock, no migration work when current.
@Suite struct ReadOnlyStoreTests {
  /// A home with one task whose notes are sealed, and its keyring.
  func homeWithOneTask(_ directory: TemporaryDirectory) throws -> (TaskerHome, Keyring) {
    let home = TaskerHome(directory: directory.path)
    let keyring = try Keyring.generate()
    var draft = TaskDraft(title: "read me")
    draft.notes = "sealed words"
    try TaskStore(home: home, keys: keyring).addTask(draft)
    return (home, keyring)
  }

  @Test func aReaderOpensWhileAWriterHoldsTheLockAndCannotWrite() throws {
    let directory = try TemporaryDirectory()
    let (home, keyring) = try homeWithOneTask(directory)
    // Another process in the middle of a change: the read-write open would
    // wait 5 s for this lock (its migration check is a write transaction).
    let writer = try Connection(path: home.databasePath, create: false)
    try writer.execute("BEGIN IMMEDIATE")
    defer { try? writer.execute("ROLLBACK") }

    let started = Date()
    let reader = try TaskStore.reading(home: home, keys: keyring)
    #expect(try reader.task(id: 1).notes == "sealed words")
    #expect(Date().timeIntervalSince(started) < 1, "the reader took no lock")

    let error = #expect(throws: TaskerError.self) { try reader.addTask(TaskDraft(title: "nope")) }
    guard case .database(_, let code, _) = error else {
      Issue.record("\(String(describing: error))")
      return
    }
    #expect(code & 0xff == 8, "SQLITE_READONLY")
  }

  @Test func anOlderDatabaseIsMigratedOnceThenReadOnly() throws {
    let directory = try TemporaryDirectory()
    let home = TaskerHome(directory: directory.path)
    do {
      _ = FileManager.default.createFile(
        atPath: home.databasePath, contents: nil, attributes: [.posixPermissions: 0o600])
      let old = try Connection(path: home.databasePath, create: false)
      try old.execute(Schema.migrations[0])
      try old.execute("PRAGMA user_version = 1")
      try old.execute("INSERT INTO tasks (title, notes, created_at) VALUES ('from v1', 'plain', 0)")
    }
    let first = try TaskStore.reading(home: home, keys: try Keyring.generate())
    #expect(try first.task(id: 1).notes == "plain")
    #expect(try first.connection.prepare("PRAGMA user_version").first { $0.integer(0) } == Int64(Schema.current))
    let second = try TaskStore.reading(home: home, keys: try Keyring.generate())
    #expect(throws: TaskerError.self) { try second.addTask(TaskDraft(title: "a read-only store writes nothing")) }
  }

  @Test func aNewerDatabaseIsRefusedUntouchedAndAMissingOneIsNotMade() throws {
    let directory = try TemporaryDirectory()
    let (home, keyring) = try homeWithOneTask(directory)
    try Connection(path: home.databasePath, create: false).execute("PRAGMA user_version = \(Schema.current + 1)")
    let before = try Data(contentsOf: URL(fileURLWithPath: home.databasePath))
    #expect(
      throws: TaskerError.databaseTooNew(
        path: home.databasePath, version: Schema.current + 1, supported: Schema.current)
    ) {
      try TaskStore.reading(home: home, keys: keyring)
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: home.databasePath)) == before)

    let empty = TaskerHome(directory: directory.path("none"))
    #expect(throws: TaskerError.databaseNotFound(path: empty.databasePath)) {
      try TaskStore.reading(home: empty, keys: keyring)
    }
    #expect(!FileManager.default.fileExists(atPath: empty.databasePath))
  }
}
