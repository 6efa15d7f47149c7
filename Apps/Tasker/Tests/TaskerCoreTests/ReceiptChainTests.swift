import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// Schema version 7: receipts chained by SHA-256 (receipt.md, *The chain*).
@Suite("Issue 23 break 7: receipts carry a hash chain")
struct ReceiptChainTests {
  @Test func aVersionSixDatabaseIsChainedInIdOrderByTheMigration() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("v6.db")
    do {
      #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
      let old = try Connection(path: path, create: false)
      for step in Schema.migrations[0..<6] { try old.execute(step) }
      try old.execute("PRAGMA user_version = 6")
      try old.execute("INSERT INTO tasks (title, created_at) VALUES ('t', 0)")
      try old.execute(GateReceiptTableTests.insert([:]))
      try old.execute(GateReceiptTableTests.insert(["tool": "'complete_task'", "undo": "'reopen-task:1'"]))
    }
    let migrated = try TaskStore(databasePath: path, keys: try Keyring.generate())
    #expect(try migrated.connection.prepare("PRAGMA user_version").first { $0.integer(0) } == Int64(Schema.current))
    let rows = try migrated.receiptChainRows()
    #expect(rows.map(\.id) == [1, 2])
    let first = try rows[0].receipt.get()
    let second = try rows[1].receipt.get()
    let one = ReceiptChain.link(previous: [UInt8](repeating: 0, count: 32), first)
    #expect(rows[0].chain == SHA256.hash(data: [UInt8](repeating: 0, count: 32) + first.canonicalBytes).bytes)
    #expect(rows[0].chain == one)
    #expect(rows[1].chain == ReceiptChain.link(previous: one, second))
    #expect(try migrated.verifyReceipts().outcome == .intact)
    #expect(throws: TaskerError.self, "the update trigger is back") {
      try migrated.connection.execute("UPDATE gate_receipts SET chain = NULL WHERE id = 1")
    }
    let deleted = try migrated.deleteTask(id: 1, keepingCopyAs: .user)
    #expect(deleted.id == 3)
    let report = try migrated.verifyReceipts()
    #expect(report.outcome == .intact && report.lastID == 3 && report.count == 3)
    #expect(report.headID == nil && report.unanchored == 3, "a bare keyring keeps no head key")
  }

  @Test func aRowThatBreaksTheRulesIsLeftUnchainedAndReported() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("v6.db")
    do {
      #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
      let old = try Connection(path: path, create: false)
      for step in Schema.migrations[0..<6] { try old.execute(step) }
      try old.execute("PRAGMA user_version = 6")
      try old.execute(GateReceiptTableTests.insert([:]))
      try old.execute("PRAGMA ignore_check_constraints = ON")
      try old.execute(GateReceiptTableTests.insert(["decision": "'maybe'"]))
    }
    let migrated = try TaskStore(databasePath: path, keys: try Keyring.generate())
    let report = try migrated.verifyReceipts()
    #expect(report.outcome == .receiptInvalid && report.brokenID == 2, "\(report)")
  }
}
