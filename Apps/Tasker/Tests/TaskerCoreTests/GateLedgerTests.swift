import AssistantKeys
import Foundation
import TaskCrypto
import TaskerTestSupport
import XCTest

@testable import TaskerCore

final class GateLedgerTests: XCTestCase {
  private func store(_ directory: TemporaryDirectory) throws -> TaskStore {
    try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
  }

  func testReceiptsAreAppendOnly() throws {
    let directory = try TemporaryDirectory()
    let store = try store(directory)
    let stored = try store.appendReceipt(
      GateReceipt(
        actor: .trusted, keyID: nil, assistant: nil, tool: .addTask, decision: .allow, target: "task/1",
        summary: "added task 1", undo: ReceiptUndo(.deleteTask, 1)))
    XCTAssertEqual(stored.id, 1)
    XCTAssertThrowsError(try store.connection.execute("UPDATE gate_receipts SET decision = 'refuse' WHERE id = 1"))
    XCTAssertThrowsError(try store.connection.execute("DELETE FROM gate_receipts"))
    XCTAssertEqual(try store.receipt(id: 1)?.decision, .allow)
  }

  func testTheSchemaRefusesMalformedReceipts() throws {
    let directory = try TemporaryDirectory()
    let store = try store(directory)
    let bad = [
      GateReceipt(
        actor: .assistant, keyID: nil, assistant: nil, tool: .addTask, decision: .allow, target: "task/1",
        summary: "", undo: ReceiptUndo(.deleteTask, 1)),
      GateReceipt(
        actor: .trusted, keyID: Self.key(1), assistant: nil, tool: .addTask, decision: .allow,
        target: "task/1", summary: "", undo: ReceiptUndo(.deleteTask, 1)),
      GateReceipt(
        actor: .trusted, keyID: nil, assistant: nil, tool: .addTask, decision: .allow, target: "task/1",
        summary: "", undo: ReceiptUndo(.reopenTask, 1)),
      GateReceipt(
        actor: .user, keyID: nil, assistant: nil, tool: .addTask, decision: .changed, target: "task/1",
        summary: "", undo: ReceiptUndo(.deleteTask, 1)),
      GateReceipt(
        actor: .assistant, keyID: Self.key(1), assistant: "a", tool: .deletePage, decision: .allow,
        target: "page/1", summary: ""),
      GateReceipt(
        actor: .trusted, keyID: nil, assistant: nil, tool: .listTasks, decision: .allow, target: "task/1",
        summary: ""),
    ]
    for receipt in bad {
      XCTAssertThrowsError(try store.appendReceipt(receipt), "\(receipt)")
      var numbered = receipt
      numbered.id = 1
      XCTAssertThrowsError(try numbered.check(), "the reader refuses what the table refuses: \(receipt)")
    }
    let first = try store.appendReceipt(Self.added(1))
    let undo = GateReceipt(
      actor: .user, keyID: nil, assistant: nil, tool: .undo, decision: .undone, target: "receipt/\(first.id)",
      summary: "", undoes: first.id)
    XCTAssertNoThrow(try store.appendReceipt(undo))
    XCTAssertThrowsError(try store.appendReceipt(undo), "a receipt is undone at most once")
  }

  /// A trusted addition of task `task` that ran, with its undo.
  static func added(_ task: Int64) -> GateReceipt {
    GateReceipt(
      actor: .trusted, keyID: nil, assistant: nil, tool: .addTask, decision: .allow, target: "task/\(task)",
      summary: "added task \(task)", undo: ReceiptUndo(.deleteTask, task))
  }

  /// The key id `tkid_` and `n` in 16 hex digits.
  static func key(_ n: Int) -> AssistantKeyID {
    let hex = String(n, radix: 16)
    return AssistantKeyID("tkid_" + String(repeating: "0", count: 16 - hex.count) + hex)!
  }

  func testQueuedArgumentsAreSealedInTheDatabase() throws {
    let directory = try TemporaryDirectory()
    let store = try store(directory)
    let queued = try store.enqueueApproval(
      keyID: Self.key(1), assistant: "bot", tool: .addTask,
      arguments: "{\"notes\":\"canary-approval-note\",\"title\":\"t\"}", reason: .risky, summary: "add task 't'")
    let raw = try store.connection.prepare("SELECT arguments FROM gate_approvals WHERE id = ?")
      .first([.integer(queued.id)]) { $0.text(0) }
    XCTAssertTrue(SealedValue.isSealed(raw ?? ""))
    XCTAssertFalse(raw?.contains("canary") ?? true)
    XCTAssertEqual(try store.approval(id: queued.id)?.arguments, "{\"notes\":\"canary-approval-note\",\"title\":\"t\"}")
    XCTAssertEqual(try store.approvals(pendingOnly: true).map(\.id), [queued.id])
    XCTAssertTrue(try store.resolveApproval(id: queued.id, approved: false))
    XCTAssertFalse(try store.resolveApproval(id: queued.id, approved: true), "decided once")
    XCTAssertEqual(try store.approvals(pendingOnly: true), [])
  }

  func testTheBudgetCountsOnlyRunActionsOfOneKeySinceATime() throws {
    let directory = try TemporaryDirectory()
    let store = try store(directory)
    let approval = try store.enqueueApproval(
      keyID: Self.key(1), assistant: "a", tool: .addTask, arguments: "{}", reason: .risky, summary: "")
    let decisions: [(ReceiptDecision, String, ReceiptUndo?, Int64?)] = [
      (.allow, "task/1", ReceiptUndo(.deleteTask, 1), nil),
      (.approved, "task/2", ReceiptUndo(.deleteTask, 2), approval.id),
      (.ask(.risky), "approval/\(approval.id)", nil, approval.id), (.refuse(.budgetExhausted), "", nil, nil),
      (.allow, "task/3", ReceiptUndo(.deleteTask, 3), nil),
    ]
    for (decision, target, undo, queued) in decisions {
      try store.appendReceipt(
        GateReceipt(
          actor: .assistant, keyID: Self.key(1), assistant: "a", tool: .addTask, decision: decision,
          target: target, summary: "", undo: undo, approval: queued))
    }
    try store.appendReceipt(
      GateReceipt(
        actor: .assistant, keyID: Self.key(2), assistant: "b", tool: .addTask, decision: .allow,
        target: "task/4", summary: "", undo: ReceiptUndo(.deleteTask, 4)))
    XCTAssertEqual(try store.actionCount(keyID: Self.key(1), since: 0), 3)
    XCTAssertEqual(try store.actionCount(keyID: Self.key(1), since: Int64(Date().timeIntervalSince1970) + 10), 0)
  }

  func testANoteEditInsideTheGatesTransactionTruncatesTheLogAfterTheCommit() throws {
    let directory = try TemporaryDirectory()
    let store = try store(directory)
    var draft = TaskDraft(title: "t")
    draft.notes = "first"
    try store.addTask(draft)
    var changes = TaskChanges()
    changes.notes = "edited by the gate"
    try store.inOneTransaction {
      try store.editTask(id: 1, changes)
      try store.appendReceipt(
        GateReceipt(
          actor: .trusted, keyID: nil, assistant: nil, tool: .editTask, decision: .allow, target: "task/1",
          summary: "edited task(s) 1: notes"))
    }
    let log = try FileManager.default.attributesOfItem(atPath: directory.path("t.db-wal"))[.size] as? Int
    XCTAssertEqual(log, 0, "checkpointed and truncated once the edit and its receipt committed")
    XCTAssertEqual(try store.task(id: 1).notes, "edited by the gate")
  }
}
