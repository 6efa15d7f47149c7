import Foundation
import TaskCrypto
import TaskerTestSupport
import XCTest

@testable import TaskerCore

final class SchemaTests: XCTestCase {
  func testConnectionSettingsAndVersion() throws {
    let directory = try TemporaryDirectory()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
    let pragma = { (name: String) in try store.connection.prepare("PRAGMA \(name)").first { $0.text(0) } }
    XCTAssertEqual(try pragma("journal_mode"), "wal")
    XCTAssertEqual(try pragma("foreign_keys"), "1")
    XCTAssertEqual(try pragma("user_version"), String(Schema.current))
    XCTAssertEqual(try pragma("busy_timeout"), "5000")
    let mode = try FileManager.default.attributesOfItem(atPath: directory.path("t.db"))[.posixPermissions] as? Int
    XCTAssertEqual(mode, 0o600)
  }

  func testForeignKeysAreEnforced() throws {
    let directory = try TemporaryDirectory()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
    XCTAssertThrowsError(
      try store.connection.prepare(
        "INSERT INTO attachments (task_id, name, byte_count, media_type, file, created_at) VALUES (42, 'a', 0, 't', 'f', 0)"
      ).run()
    ) { error in
      guard case .database(_, let code, _) = error as? TaskerError else { return XCTFail("\(error)") }
      XCTAssertEqual(code, 787, "SQLITE_CONSTRAINT_FOREIGNKEY")
    }
  }

  func testMigrationIsIdempotentAndANewerDatabaseIsRefusedUntouched() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("t.db")
    try TaskStore(databasePath: path, keys: try Keyring.generate()).addTask(TaskDraft(title: "kept"))
    XCTAssertEqual(try TaskStore(databasePath: path, keys: try Keyring.generate()).tasks().map(\.title), ["kept"])

    let connection = try Connection(path: path, create: false)
    try connection.execute("PRAGMA user_version = \(Schema.current + 1)")
    let before = try Data(contentsOf: URL(fileURLWithPath: path))
    XCTAssertThrowsError(try TaskStore(databasePath: path, keys: try Keyring.generate())) {
      XCTAssertEqual(
        $0 as? TaskerError, .databaseTooNew(path: path, version: Schema.current + 1, supported: Schema.current))
    }
    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
  }

  func testMissingDatabaseAndNonDatabaseFilesAreTypedErrors() throws {
    let directory = try TemporaryDirectory()
    let missing = directory.path("missing.db")
    XCTAssertThrowsError(try TaskStore(databasePath: missing, keys: try Keyring.generate(), create: false)) {
      XCTAssertEqual($0 as? TaskerError, .databaseNotFound(path: missing))
    }
    XCTAssertFalse(FileManager.default.fileExists(atPath: missing))
    let junk = directory.path("junk.db")
    FileManager.default.createFile(atPath: junk, contents: Data(repeating: 0x41, count: 4096))
    XCTAssertThrowsError(try TaskStore(databasePath: junk, keys: try Keyring.generate())) {
      XCTAssertEqual($0 as? TaskerError, .notADatabase(path: junk))
    }
  }

  func testAFailedChangeRollsBackWhole() throws {
    let directory = try TemporaryDirectory()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
    struct Stop: Error {}
    XCTAssertThrowsError(
      try store.connection.transaction {
        try store.connection.prepare("INSERT INTO tasks (title, created_at) VALUES ('x', 0)").run()
        throw Stop()
      })
    XCTAssertEqual(try store.tasks(.all).count, 0)
  }
}
