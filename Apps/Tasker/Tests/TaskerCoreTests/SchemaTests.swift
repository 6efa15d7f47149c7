import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

@Suite struct SchemaTests {
  @Test func connectionSettingsAndVersion() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    let pragma = { (name: String) in try store.connection.prepare("PRAGMA \(name)").first { $0.text(0) } }
    #expect(try pragma("journal_mode") == "wal")
    #expect(try pragma("foreign_keys") == "1")
    #expect(try pragma("user_version") == String(Schema.current))
    #expect(try pragma("busy_timeout") == "5000")
    #expect(try pragma("page_size") == "16384")
    #expect(try pragma("synchronous") == "2", "FULL: the log is synced at every commit")
    #expect(try pragma("secure_delete") == "1")
    let mode = try FileManager.default.attributesOfItem(atPath: directory.path("t.db"))[.posixPermissions] as? Int
    #expect(mode == 0o600)
  }

  @Test func foreignKeysAreEnforced() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    let error = #expect(throws: TaskerError.self) {
      try store.connection.prepare(
        "INSERT INTO attachments (task_id, name, byte_count, media_type, file, created_at) VALUES (42, 'a', 0, 't', 'f', 0)"
      ).run()
    }
    guard case .database(_, let code, _) = error else {
      Issue.record("\(String(describing: error))")
      return
    }
    #expect(code == 787, "SQLITE_CONSTRAINT_FOREIGNKEY")
  }

  @Test func migrationIsIdempotentAndANewerDatabaseIsRefusedUntouched() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("t.db")
    try TaskStore(databasePath: path, keys: try Keyring.generate()).addTask(TaskDraft(title: "kept"))
    #expect(try TaskStore(databasePath: path, keys: try Keyring.generate()).tasks().map(\.title) == ["kept"])

    let connection = try Connection(path: path, create: false)
    try connection.execute("PRAGMA user_version = \(Schema.current + 1)")
    let before = try Data(contentsOf: URL(fileURLWithPath: path))
    #expect(throws: TaskerError.databaseTooNew(path: path, version: Schema.current + 1, supported: Schema.current)) {
      try TaskStore(databasePath: path, keys: try Keyring.generate())
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
  }

  /// Issue 22: `user_version = -1` made `migrations[version...]` trap
  /// (SIGILL) in every command. A negative version is a damaged database,
  /// for the writer and the reader alike, and the file is not touched.
  @Test(arguments: [-1, Int(Int32.min)])
  func aNegativeSchemaVersionIsADamagedDatabaseNotACrash(version: Int) throws {
    let directory = try TemporaryDirectory()
    let home = TaskerHome(directory: directory.path)
    try TaskStore(home: home, keys: try Keyring.generate()).addTask(TaskDraft(title: "kept"))
    try Connection(path: home.databasePath, create: false).execute("PRAGMA user_version = \(version)")
    let before = try Data(contentsOf: URL(fileURLWithPath: home.databasePath))
    let damaged = TaskerError.damagedDatabase(
      path: home.databasePath, reason: "schema version \(version) is none that Tasker writes (0 to \(Schema.current))")
    #expect(throws: damaged) { try TaskStore(home: home, keys: try Keyring.generate()) }
    #expect(throws: damaged) { try TaskStore.reading(home: home, keys: try Keyring.generate()) }
    #expect(try Data(contentsOf: URL(fileURLWithPath: home.databasePath)) == before)
  }

  @Test func aVersionOneDatabaseMigratesForwardWithItsRows() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("t.db")
    do {
      #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
      let old = try Connection(path: path, create: false)
      try old.execute(Schema.migrations[0])
      try old.execute("PRAGMA user_version = 1")
      try old.execute("INSERT INTO tasks (title, notes, created_at) VALUES ('from v1', 'plain', 0)")
    }
    let store = try TaskStore(databasePath: path, keys: try Keyring.generate())
    #expect(try store.connection.prepare("PRAGMA user_version").first { $0.integer(0) } == Int64(Schema.current))
    #expect(try store.task(id: 1).notes == "plain")
    let plan = try store.connection.prepare(
      "EXPLAIN QUERY PLAN SELECT \(TaskStore.summaryColumns) FROM tasks WHERE status = 'open' ORDER BY due IS NULL, due, id"
    ).rows { $0.text(3) }
    #expect(plan == ["SCAN tasks USING COVERING INDEX tasks_listing"], "list reads the index alone")
  }

  @Test func missingDatabaseAndNonDatabaseFilesAreTypedErrors() throws {
    let directory = try TemporaryDirectory()
    let missing = directory.path("missing.db")
    #expect(throws: TaskerError.databaseNotFound(path: missing)) {
      try TaskStore(databasePath: missing, keys: try Keyring.generate(), create: false)
    }
    #expect(!(FileManager.default.fileExists(atPath: missing)))
    let junk = directory.path("junk.db")
    #expect(
      FileManager.default.createFile(
        atPath: junk, contents: Data(repeating: 0x41, count: 4096), attributes: [.posixPermissions: 0o600]))
    #expect(throws: TaskerError.notADatabase(path: junk)) {
      try TaskStore(databasePath: junk, keys: try Keyring.generate())
    }
  }

  @Test func aFailedChangeRollsBackWhole() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    struct Stop: Error, Equatable {}
    #expect(throws: (any Error).self) {
      try store.connection.transaction {
        try store.connection.prepare("INSERT INTO tasks (title, created_at) VALUES ('x', 0)").run()
        throw Stop()
      }
    }
    #expect(try store.tasks(.all).count == 0)
  }
}
