import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// Schema version 8: the words of reads and refusals (receipt.md), the
/// table rebuilt with every row and chain value of version 7 unchanged.
@Suite("Issue 23: receipt vocabulary v8, migrated without touching the chain")
struct ReceiptSchemaEightTests {
  static let assistant = ["actor": "'assistant'", "key_id": "'tkid_0123456789abcdef'", "assistant": "'a'"]

  /// A row of an assistant with `changes` (no undo unless named).
  static func row(_ changes: [String: String]) -> String {
    GateReceiptTableTests.insert(assistant.merging(["undo": "NULL"]) { $1 }.merging(changes) { $1 })
  }

  /// A version 7 database as this build's migrations 1 to 7 leave it, with
  /// receipts chained by version 7's own fill, and a kept copy that names
  /// its receipt.
  static func versionSeven(at path: String) throws -> [[UInt8]?] {
    #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
    let old = try Connection(path: path, create: false)
    for step in Schema.migrations[0..<6] { try old.execute(step) }
    try old.execute("INSERT INTO tasks (title, created_at) VALUES ('t', 0)")
    try old.execute(GateReceiptTableTests.insert([:]))
    try old.execute(row(["tool": "'delete_task'", "decision": "'refuse:budget-exhausted'", "target": "''"]))
    try old.execute(
      GateReceiptTableTests.insert([
        "actor": "'user'", "tool": "'delete_task'", "decision": "'changed'", "undo": "'restore-task:1'",
      ]))
    try old.execute(
      """
      INSERT INTO gate_undo_tasks (receipt, fields, id, title, notes, priority, status, created_at, contexts)
      VALUES (3, '*', 1, 't', '', 0, 'open', 0, '')
      """)
    try old.execute("DELETE FROM tasks WHERE id = 1")
    try old.execute(Schema.migrations[6])
    try Schema.afterStep[7]?(old)
    try old.execute("PRAGMA user_version = 7")
    return try old.prepare("SELECT chain FROM gate_receipts ORDER BY id").rows([]) { $0.optionalChain(0) }
  }

  @Test func aVersionSevenDatabaseKeepsEveryRowAndLinkAndItsKeptCopies() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("v7.db")
    let chains = try Self.versionSeven(at: path)
    #expect(chains.count == 3 && chains.allSatisfy { $0 != nil })
    let migrated = try TaskStore(databasePath: path, keys: try Keyring.generate())
    #expect(try migrated.connection.prepare("PRAGMA user_version").first { $0.integer(0) } == Int64(Schema.current))
    let rows = try migrated.receiptChainRows()
    #expect(rows.map(\.id) == [1, 2, 3])
    #expect(rows.map(\.chain) == chains, "the chain values are copied, not recomputed")
    #expect(try migrated.verifyReceipts().outcome == .intact)
    // The kept copy still names the new table, and foreign keys hold.
    let undoTable = try migrated.connection.prepare("SELECT sql FROM sqlite_master WHERE name = 'gate_undo_tasks'")
      .first { $0.text(0) }
    #expect(undoTable?.contains("REFERENCES gate_receipts (id)") == true, "\(undoTable ?? "")")
    #expect(try migrated.connection.prepare("PRAGMA foreign_key_check").rows([]) { $0.text(0) }.isEmpty)
    let restored = try migrated.undo(receipt: 3)
    #expect(restored.id == 4, "the numbering carries on")
    try migrated.connection.execute(Self.row(["tool": "'list_tasks'", "decision": "'read'", "target": "'reads/12'"]))
    let report = try migrated.verifyReceipts()
    #expect(report.count == 5 && report.outcome != .receiptInvalid)
    #expect(try migrated.receipts().first?.decision == .read)
    #expect(throws: TaskerError.self, "append-only still") {
      try migrated.connection.execute("DELETE FROM gate_receipts WHERE id = 5")
    }
  }

  @Test func aLightTransactionPutsFullSyncBack() throws {
    let directory = try TemporaryDirectory()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
    let synchronous = { try store.connection.prepare("PRAGMA synchronous").first { $0.integer(0) } }
    let inside = try store.inOneLightTransaction { try synchronous() }
    #expect(inside == 1, "NORMAL for the tally's commit")
    #expect(try synchronous() == Connection.synchronousFull)
    #expect(throws: TaskerError.self) {
      try store.inOneLightTransaction { throw TaskerError.invalidValue(field: "x", reason: "y") }
    }
    #expect(try synchronous() == Connection.synchronousFull, "also after a failure")
  }

  /// The new words, each in a row the table accepts.
  static let valid: [(String, [String: String])] = [
    ("aggregated reads", ["tool": "'search_tasks'", "decision": "'read'", "target": "'reads/1'"]),
    ("note reads", ["tool": "'read_note'", "decision": "'read'", "target": "'reads/2000'"]),
    ("a full queue", ["tool": "'delete_task'", "decision": "'refuse:queue-full'", "target": "''"]),
    ("a spent read budget", ["tool": "'show_task'", "decision": "'refuse:read-budget-exhausted'", "target": "''"]),
    (
      "a damaged read budget", ["tool": "'list_tasks'", "decision": "'refuse:read-budget-undecidable'", "target": "''"]
    ),
    (
      "refusals of an action", ["tool": "'add_task'", "decision": "'refuse:rate-limited'", "target": "'refusals/2990'"]
    ),
    ("refusals of a read", ["tool": "'read_note'", "decision": "'refuse:rate-limited'", "target": "'refusals/1'"]),
    ("a call that failed", ["tool": "'edit_task'", "decision": "'failed'", "target": "''"]),
    ("a call on a task that failed", ["tool": "'complete_task'", "decision": "'failed'", "target": "'task/4'"]),
    (
      "a trusted call that failed",
      ["actor": "'trusted'", "key_id": "NULL", "assistant": "NULL", "decision": "'failed'"]
    ),
  ]

  /// Rows with the new words that break a rule.
  static let broken: [(String, [String: String])] = [
    ("a read that ran", ["tool": "'list_tasks'", "decision": "'allow'", "target": "'task/1'"]),
    ("a read of an acting tool", ["tool": "'add_task'", "decision": "'read'", "target": "'reads/1'"]),
    ("no reads", ["tool": "'list_tasks'", "decision": "'read'", "target": "'reads/0'"]),
    ("reads with a leading zero", ["tool": "'list_tasks'", "decision": "'read'", "target": "'reads/01'"]),
    ("reads without a count", ["tool": "'list_tasks'", "decision": "'read'", "target": "''"]),
    ("a read with an undo", ["tool": "'list_tasks'", "decision": "'read'", "target": "'reads/1'", "undo": "'x:1'"]),
    (
      "a trusted read",
      [
        "actor": "'trusted'", "key_id": "NULL", "assistant": "NULL", "tool": "'list_tasks'", "decision": "'read'",
        "target": "'reads/1'",
      ]
    ),
    ("a user's failure", ["actor": "'user'", "key_id": "NULL", "assistant": "NULL", "decision": "'failed'"]),
    (
      "a failure with an undo",
      ["tool": "'add_task'", "decision": "'failed'", "target": "'task/1'", "undo": "'delete-task:1'"]
    ),
    ("a failure of a read", ["tool": "'show_task'", "decision": "'failed'", "target": "''"]),
    ("a read budget on an action", ["decision": "'refuse:read-budget-exhausted'", "target": "''"]),
    ("a full queue on a read", ["tool": "'list_tasks'", "decision": "'refuse:queue-full'", "target": "''"]),
    (
      "a missing grant on a read",
      ["tool": "'read_note'", "decision": "'refuse:missing-grant:notes:read'", "target": "''"]
    ),
    ("refusals without a count", ["decision": "'refuse:rate-limited'", "target": "''"]),
    ("no refusals", ["decision": "'refuse:rate-limited'", "target": "'refusals/0'"]),
    ("a queue-full with a target", ["decision": "'refuse:queue-full'", "target": "'refusals/3'"]),
  ]

  @Test func theTableTakesTheNewWordsOnlyByTheirRules() throws {
    let directory = try TemporaryDirectory()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
    for (what, changes) in Self.valid {
      #expect(throws: Never.self, "\(what)") { try store.connection.execute(Self.row(changes)) }
    }
    for (what, changes) in Self.broken {
      #expect(throws: TaskerError.self, "\(what)") { try store.connection.execute(Self.row(changes)) }
    }
    let read = try store.receipts()
    #expect(read.count == Self.valid.count, "every row the table took reads back under the Swift rules")
    // The Swift rules refuse what the table refuses, with the checks off.
    try store.connection.execute("PRAGMA ignore_check_constraints = ON")
    for (offset, (what, changes)) in Self.broken.enumerated() {
      let id = Int64(Self.valid.count + offset + 1)
      try store.connection.execute(
        GateReceiptTableTests.insert(
          Self.assistant.merging(["undo": "NULL"]) { $1 }.merging(changes) { $1 }, id: id))
      #expect(throws: TaskerError.self, "\(what)") { try store.receipt(id: id) }
    }
  }
}
