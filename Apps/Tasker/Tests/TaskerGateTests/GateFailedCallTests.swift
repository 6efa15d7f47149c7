import AssistantKeys
import CommandKit
import Foundation
import TaskCrypto
import TaskerCore
import TaskerGate
import TaskerTestSupport
import XCTest

/// An allowed or approved acting call that fails in the store rolls its
/// change back and leaves a `failed` receipt in the same decision
/// transaction, whose summary names the failure's class only.
final class GateFailedCallTests: XCTestCase {
  private var directory: TemporaryDirectory!
  private var store: TaskStore!

  override func setUpWithError() throws {
    directory = try TemporaryDirectory()
    store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
  }

  private func toolbox(_ trust: TrustLevel) -> GateToolbox { .bot(store, trust) }

  func testAMissingTaskLeavesAFailedReceiptNamingTheClassOnly() throws {
    let result = try toolbox(.elevated).callTool(name: "complete_task", arguments: ["id": 42])
    XCTAssertTrue(result.isError)
    XCTAssertEqual(result.content["receipt"], "r1")
    let receipt = try XCTUnwrap(try store.receipt(id: 1))
    XCTAssertEqual(receipt.decision, .failed)
    XCTAssertEqual(receipt.actor, .assistant)
    XCTAssertEqual(receipt.target, "task/42")
    XCTAssertEqual(receipt.summary, "failed: no such task")
    XCTAssertNil(receipt.undo)
    XCTAssertNil(receipt.approval)
    XCTAssertNil(try store.verifyReceipts().brokenID)
  }

  func testAFailureHalfwayRollsBackWhatTheCallChanged() throws {
    try store.addTask(TaskDraft(title: "first"))
    let result = try toolbox(.elevated).callTool(name: "edit_task", arguments: ["ids": [1, 9], "title": "renamed"])
    XCTAssertTrue(result.isError)
    XCTAssertEqual(try store.task(id: 1).title, "first", "the edit of task 1 was rolled back")
    let receipt = try XCTUnwrap(try store.receipts().first)
    XCTAssertEqual(receipt.decision, .failed)
    XCTAssertEqual(receipt.target, "")
    XCTAssertEqual(receipt.summary, "failed: no such task")
  }

  func testATrustedFailureLeavesATrustedFailedReceipt() throws {
    let trusted = GateToolbox.trusted(store: store, vaultDirectory: nil)
    XCTAssertTrue(try trusted.callTool(name: "delete_task", arguments: ["id": 3]).isError)
    let receipt = try XCTUnwrap(try store.receipts().first)
    XCTAssertEqual(receipt.actor, .trusted)
    XCTAssertEqual(receipt.decision, .failed)
    XCTAssertEqual(receipt.target, "task/3")
  }

  func testAnApprovedCallThatFailsIsDecidedAndLeavesAFailedReceipt() throws {
    try store.addTask(TaskDraft(title: "Old"))
    let queued = try toolbox(.standard).callTool(name: "delete_task", arguments: ["id": 1])
    let approval = try XCTUnwrap(queued.content["approval"]?.integerValue)
    try store.deleteTask(id: 1)  // gone before the user approves
    XCTAssertThrowsError(try GateDesk(store: store).approve(approval, checkKey: { _ in })) {
      guard case .approvedCallFailed(approval, let receipt, .notFound(.task, 1))? = $0 as? GateError else {
        return XCTFail("\($0)")
      }
      XCTAssertEqual(receipt, 2)
    }
    let receipt = try XCTUnwrap(try store.receipt(id: 2))
    XCTAssertEqual(receipt.decision, .failed)
    XCTAssertEqual(receipt.keyID, AssistantKeyID("tkid_00000000000000aa"))
    XCTAssertEqual(receipt.summary, "failed: no such task (approval #\(approval))")
    XCTAssertNil(receipt.approval)
    XCTAssertEqual(try store.approval(id: approval)?.status, .approved, "decided, never run again")
    XCTAssertNil(try store.verifyReceipts().brokenID)
  }

  func testAFailedCallCountsAgainstTheBudget() throws {
    try store.setGateSetting("budget.default", "1")
    XCTAssertTrue(try toolbox(.elevated).callTool(name: "complete_task", arguments: ["id": 42]).isError)
    XCTAssertThrowsError(try toolbox(.elevated).callTool(name: "add_task", arguments: ["title": "a"])) {
      XCTAssertEqual(($0 as? MCPError)?.code, MCPError.refusedCode)
    }
  }
}
