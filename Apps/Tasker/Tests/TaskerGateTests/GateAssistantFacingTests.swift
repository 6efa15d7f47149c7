import CommandKit
import TaskVault
import TaskerCore
import TaskerGate
import XCTest

/// What an assistant is told (issue 23): a store failure never names a
/// path, and a call that reads or seals a note is known as such.
final class GateAssistantFacingTests: XCTestCase {
  func testNoStoreErrorTellsAnAssistantAPath() {
    let path = "/home/someone/.local/share/tasker/tasker.db"
    let errors: [TaskerError] = [
      .databaseNotFound(path: path), .notADatabase(path: path), .databaseTooNew(path: path, version: 9, supported: 5),
      .damagedDatabase(path: path, reason: "x"), .databaseBusy(path: path),
      .database(path: path, code: 1, message: "LIKE or GLOB pattern too complex"), .vaultNotFound(path: path),
      .fileAccess(path: path, reason: "x"), .system(.notOwner(path: path)),
    ]
    for error in errors {
      let message = GateToolbox.assistantMessage(for: error)
      XCTAssertFalse(message.contains("/home/someone"), "\(error)")
      XCTAssertFalse(message.contains("tasker.db"), "\(error)")
      XCTAssertFalse(message.contains("GLOB"), "no SQLite message: \(error)")
    }
    XCTAssertEqual(
      GateToolbox.assistantMessage(for: .notFound(kind: .task, id: 7)), "no task with id 7", "its own call in full")
    XCTAssertEqual(
      GateToolbox.assistantMessage(for: .vaultLocked(reason: .notUnlocked)),
      TaskerError.vaultLocked(reason: .notUnlocked).description)
  }

  func testTheCallsThatReadOrSealANoteAreTheOnesALockRefuses() throws {
    func touches(_ tool: String, _ arguments: [String: JSONValue]) throws -> Bool {
      try GateCall.parse(tool: tool, arguments: arguments).touchesNotes
    }
    XCTAssertTrue(try touches("read_note", ["id": 1]))
    XCTAssertTrue(try touches("list_tasks", ["include_notes": true]))
    XCTAssertTrue(try touches("search_tasks", ["query": "q", "include_notes": true]))
    XCTAssertTrue(try touches("show_task", ["id": 1, "include_notes": true]))
    XCTAssertTrue(try touches("add_task", ["title": "t", "notes": "n"]))
    XCTAssertTrue(try touches("edit_task", ["ids": [1], "notes": "n"]))
    XCTAssertTrue(try touches("add_page", ["title": "t", "body": "b"]))
    XCTAssertTrue(try touches("delete_task", ["id": 1]))
    XCTAssertFalse(try touches("list_tasks", [:]))
    XCTAssertFalse(try touches("show_task", ["id": 1]))
    XCTAssertFalse(try touches("add_task", ["title": "t"]))
    XCTAssertFalse(try touches("edit_task", ["ids": [1], "title": "t"]))
    XCTAssertFalse(try touches("complete_task", ["id": 1]))
  }
}
