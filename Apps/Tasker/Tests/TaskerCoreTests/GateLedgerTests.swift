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
        actor: "trusted", keyID: nil, assistant: nil, tool: "add_task", decision: "allow", target: "task/1",
        summary: "added task 1", undo: "delete-task:1"))
    XCTAssertEqual(stored.id, 1)
    XCTAssertThrowsError(try store.connection.execute("UPDATE gate_receipts SET decision = 'refuse' WHERE id = 1"))
    XCTAssertThrowsError(try store.connection.execute("DELETE FROM gate_receipts"))
    XCTAssertEqual(try store.receipt(id: 1)?.decision, "allow")
  }

  func testTheSchemaRefusesMalformedReceipts() throws {
    let directory = try TemporaryDirectory()
    let store = try store(directory)
    let bad = [
      GateReceipt(actor: "robot", keyID: nil, assistant: nil, tool: "t", decision: "allow", target: "", summary: ""),
      GateReceipt(
        actor: "assistant", keyID: nil, assistant: nil, tool: "t", decision: "allow", target: "", summary: ""),
      GateReceipt(
        actor: "trusted", keyID: "tkid_0000000000000001", assistant: nil, tool: "t", decision: "allow",
        target: "", summary: ""),
      GateReceipt(
        actor: "trusted", keyID: nil, assistant: nil, tool: "t", decision: "allow", target: "", summary: "",
        undo: "drop-table:1"),
    ]
    for receipt in bad { XCTAssertThrowsError(try store.appendReceipt(receipt), "\(receipt)") }
    let first = try store.appendReceipt(
      GateReceipt(actor: "trusted", keyID: nil, assistant: nil, tool: "t", decision: "allow", target: "", summary: ""))
    let undo = GateReceipt(
      actor: "user", keyID: nil, assistant: nil, tool: "undo", decision: "undone", target: "", summary: "",
      undoes: first.id)
    XCTAssertNoThrow(try store.appendReceipt(undo))
    XCTAssertThrowsError(try store.appendReceipt(undo), "a receipt is undone at most once")
  }

  func testQueuedArgumentsAreSealedInTheDatabase() throws {
    let directory = try TemporaryDirectory()
    let store = try store(directory)
    let queued = try store.enqueueApproval(
      keyID: "tkid_0000000000000001", assistant: "bot", tool: "add_task",
      arguments: "{\"notes\":\"canary-approval-note\",\"title\":\"t\"}", reason: "risky", summary: "add task 't'")
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
    for decision in ["allow", "approved", "ask:risky", "refuse:budget-exhausted", "allow"] {
      try store.appendReceipt(
        GateReceipt(
          actor: "assistant", keyID: "tkid_0000000000000001", assistant: "a", tool: "add_task", decision: decision,
          target: "", summary: ""))
    }
    try store.appendReceipt(
      GateReceipt(
        actor: "assistant", keyID: "tkid_0000000000000002", assistant: "b", tool: "add_task", decision: "allow",
        target: "", summary: ""))
    XCTAssertEqual(try store.actionCount(keyID: "tkid_0000000000000001", since: 0), 3)
    XCTAssertEqual(
      try store.actionCount(keyID: "tkid_0000000000000001", since: Int64(Date().timeIntervalSince1970) + 10), 0)
  }
}
