import AssistantKeys
import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// The gate's words as enums: stored by raw value, read back through the
/// initialisers, and the schema's lists made from the same cases.
@Suite("The gate's vocabulary: typed end to end")
struct GateVocabularyTests {
  @Test func everyWordReadsBackAsItself() {
    for actor in GateActor.allCases { #expect(GateActor(rawValue: actor.rawValue) == actor) }
    for tool in GateTool.allCases { #expect(GateTool(rawValue: tool.rawValue) == tool) }
    for reason in AskReason.allCases { #expect(AskReason(rawValue: reason.rawValue) == reason) }
    for status in ApprovalStatus.allCases { #expect(ApprovalStatus(rawValue: status.rawValue) == status) }
    for kind in UndoKind.allCases {
      #expect(ReceiptUndo(rawValue: "\(kind.rawValue):12") == ReceiptUndo(kind, 12))
      #expect(ReceiptUndo(kind, 12).rawValue == "\(kind.rawValue):12")
    }
    let decisions = ReceiptDecision.fixedCases + [.refuse(.missingGrant("tasks:write"))]
    for decision in decisions { #expect(ReceiptDecision(rawValue: decision.rawValue) == decision) }
    #expect(
      ReceiptDecision.fixedCases.map(\.rawValue) == [
        "allow", "ask:risky", "ask:quiet-hours", "ask:quiet-hours-undecidable", "refuse:budget-exhausted",
        "refuse:budget-undecidable", "refuse:queue-full", "refuse:read-budget-exhausted",
        "refuse:read-budget-undecidable", "refuse:rate-limited", "approved", "denied", "undone", "changed", "read",
        "failed",
      ], "today's stored words, so existing databases and vectors keep reading")
    #expect(GateActor.allCases.map(\.rawValue) == ["trusted", "assistant", "user"])
    #expect(UndoKind.allCases.map(\.rawValue).prefix(3) == ["delete-task", "delete-page", "reopen-task"])
  }

  @Test(arguments: [
    "", "ALLOW", "allow:", "allow:x", "ask", "ask:", "ask:loud", "refuse", "refuse:", "refuse:missing-grant:",
    "refuse:missing-grant:Tasks", "refuse:missing-grant:1tasks", "changed:x", "maybe",
    "refuse:missing-grant:" + String(repeating: "a", count: 65),
  ])
  func anUnknownDecisionIsNoDecision(_ word: String) {
    #expect(ReceiptDecision(rawValue: word) == nil)
  }

  @Test(arguments: [
    "", "delete-task", "delete-task:", "delete-task:0", "delete-task:01", "delete-task:+1", "drop-table:1",
    "restore-task:1:2", "revert-edit:-1", "reopen-task:99999999999999999999",
  ])
  func anUnknownUndoIsNoUndo(_ word: String) {
    #expect(ReceiptUndo(rawValue: word) == nil)
  }

  @Test func theTableIsMadeFromTheEnums() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    let stored = try store.connection.prepare("SELECT sql FROM sqlite_master WHERE name = 'gate_receipts'")
      .first { $0.text(0) }
    // Version 7 added `chain` with ALTER TABLE, which SQLite writes after the last column; version 8's
    // rename into place quotes the table's name.
    #expect(
      stored.map {
        $0.replacingOccurrences(of: ", chain TEXT", with: "").replacingOccurrences(
          of: "\"gate_receipts\"", with: "gate_receipts") + ";"
      }
        == TaskStore.receiptTable.trimmingCharacters(in: .whitespacesAndNewlines))
    // No word can break out of its quotes.
    let words =
      GateActor.allCases.map(\.rawValue) + GateTool.allCases.map(\.rawValue) + UndoKind.allCases.map(\.rawValue)
      + ReceiptDecision.fixedCases.map(\.rawValue) + GateDecisionKind.allCases.map(\.rawValue)
    #expect(!words.contains { $0.contains("'") })
    // Every tool is accepted with the decision that fits it: an acting one
    // ran, a reading one only in an aggregated `read` receipt (schema 8).
    let assistant = ["actor": "'assistant'", "key_id": "'tkid_0123456789abcdef'", "assistant": "'a'"]
    for tool in GateTool.allCases where tool != .undo {
      let decision = tool.isUserOnly ? "'changed'" : "'allow'"
      let actor = tool.isUserOnly ? "'user'" : "'trusted'"
      let undo = UndoKind.of(tool).map { "'\($0.rawValue):1'" } ?? "NULL"
      let ran = GateReceiptTableTests.insert([
        "actor": actor, "tool": "'\(tool.rawValue)'", "decision": decision,
        "target": "'\(tool.targetPrefix)1'", "undo": undo,
      ])
      #expect(((try? store.connection.execute(ran)) != nil) == !tool.isRead, "\(tool) ran")
      let read = GateReceiptTableTests.insert(
        assistant.merging(["tool": "'\(tool.rawValue)'", "decision": "'read'", "target": "'reads/3'", "undo": "NULL"]) {
          $1
        })
      #expect(((try? store.connection.execute(read)) != nil) == tool.isRead, "\(tool) read")
    }
  }

  /// The SQL the store runs names no word of the vocabulary: each is bound
  /// from its enum. Only the schema's DDL lists them (made from the enums,
  /// or frozen as migration 4 ran it).
  @Test func noQueryNamesADecisionOrStatusWord() throws {
    let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Sources/TaskerCore")
    let schema: Set<String> = ["GateLedgerSchema.swift", "GateLedgerSchema+Version5.swift", "Schema.swift"]
    let words = ["allow", "approved", "denied", "undone", "changed", "pending", "trusted", "assistant", "user"]
    var checked = 0
    for name in try FileManager.default.contentsOfDirectory(atPath: sources.path)
    where name.hasSuffix(".swift") && !schema.contains(name) {
      let text = try String(contentsOf: sources.appendingPathComponent(name), encoding: .utf8)
      for word in words { #expect(!text.contains("'\(word)'"), "\(name) names '\(word)' in SQL") }
      checked += 1
    }
    #expect(checked > 10)
  }

  @Test func anApprovalWithAWordNoTaskerWritesIsAnErrorNamingIt() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    let key = try #require(AssistantKeyID("tkid_0123456789abcdef"))
    let queued = try store.enqueueApproval(
      keyID: key, assistant: "a", tool: .deleteTask, arguments: "{}", reason: .risky, summary: "s")
    var listed = queued
    listed.arguments = ""
    #expect(try store.approvals(pendingOnly: true) == [listed], "a listing does not open the arguments")
    for (column, value) in [("status", "maybe"), ("tool", "drop_table"), ("reason", "bored"), ("key_id", "tkid_x")] {
      try store.connection.execute("PRAGMA ignore_check_constraints = ON")
      try store.connection.prepare("UPDATE gate_approvals SET \(column) = ? WHERE id = 1").run([.text(value)])
      let reason =
        column == "key_id"
        ? "its key_id is not tkid_ and 16 lowercase hex digits" : "its \(column) is not one Tasker writes"
      #expect(throws: TaskerError.approvalInvalid(id: 1, reason: reason)) { try store.approvals(pendingOnly: false) }
      #expect(throws: TaskerError.approvalInvalid(id: 1, reason: reason)) { try store.approval(id: 1) }
      try store.connection.execute(
        "UPDATE gate_approvals SET status = 'pending', tool = 'delete_task', reason = 'risky'")
      try store.connection.prepare("UPDATE gate_approvals SET key_id = ?").run([.text(key.text)])
    }
    #expect(try store.approval(id: 1)?.status == .pending)
  }

  @Test func aVersionFourDatabaseMigratesWithItsReceipts() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("v4.db")
    do {
      #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
      let old = try Connection(path: path, create: false)
      for step in Schema.migrations[0..<4] { try old.execute(step) }
      try old.execute("PRAGMA user_version = 4")
      try old.execute("INSERT INTO tasks (title, created_at) VALUES ('t', 0)")
      try old.execute(GateReceiptTableTests.insert([:]))
      try old.execute(GateReceiptTableTests.insert(["tool": "'complete_task'", "undo": "'reopen-task:1'"]))
      try old.execute(
        GateReceiptTableTests.insert([
          "actor": "'user'", "tool": "'undo'", "decision": "'undone'", "target": "'receipt/1'", "undo": "NULL",
          "undoes": "1",
        ]))
      // Version 4 refuses the user's own changes: the rebuild is what allows them.
      #expect(throws: TaskerError.self) {
        try old.execute(
          GateReceiptTableTests.insert([
            "actor": "'user'", "tool": "'delete_task'", "decision": "'changed'", "undo": "'restore-task:1'",
          ]))
      }
    }
    let migrated = try TaskStore(databasePath: path, keys: try Keyring.generate())
    #expect(try migrated.connection.prepare("PRAGMA user_version").first { $0.integer(0) } == Int64(Schema.current))
    #expect(try migrated.receipts().map(\.id) == [3, 2, 1])
    #expect(try migrated.receipts().last?.undo == ReceiptUndo(.deleteTask, 1))
    #expect(throws: TaskerError.self, "still append-only") {
      try migrated.connection.execute("DELETE FROM gate_receipts")
    }
    let deleted = try migrated.deleteTask(id: 1, keepingCopyAs: .user)
    #expect(deleted.id == 4, "the numbering goes on")
    try migrated.undo(receipt: deleted.id)
    #expect(try migrated.task(id: 1).title == "t")
  }
}
