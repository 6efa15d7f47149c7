import AssistantKeys
import CommandKit
import Foundation
import TaskCrypto
import TaskerCore
import TaskerGate
import TaskerTestSupport
import XCTest

/// Issue 23, break 3: a restricted key queued calls without bound. Each key
/// may have at most `pendingApprovalCap` approvals and
/// `pendingArgumentBytesCap` bytes of arguments waiting; past either the
/// call is refused with an error naming the cap, and a receipt is left.
final class GateApprovalQueueCapTests: XCTestCase {
  private var directory: TemporaryDirectory!
  private var store: TaskStore!

  override func setUpWithError() throws {
    directory = try TemporaryDirectory()
    store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
  }

  private func toolbox(_ key: String = "tkid_00000000000000aa") -> GateToolbox {
    GateToolbox(
      store: store,
      identity: GateIdentity(keyID: AssistantKeyID(key), name: "bot", trust: .restricted, grants: [.tasksWrite]),
      vaultDirectory: nil)
  }

  /// The refusal's cap name, or nil when the call was not refused.
  private func refusedCap(_ toolbox: GateToolbox, _ arguments: [String: JSONValue]) -> String? {
    do {
      let result = try toolbox.callTool(name: "add_task", arguments: arguments)
      XCTAssertEqual(result.content["status"], "queued")
      return nil
    } catch {
      XCTAssertEqual(error.code, MCPError.refusedCode)
      guard case .string(let cap)? = error.data?["cap"] else { return "?" }
      return cap
    }
  }

  private func pending(_ key: String = "tkid_00000000000000aa") throws -> Int {
    try store.approvals(pendingOnly: true).filter { $0.keyID == AssistantKeyID(key) }.count
  }

  func testQueueingPastTheCountCapIsRefusedAndTheCountStaysAtTheCap() throws {
    let gate = toolbox()
    for index in 0..<TaskStore.pendingApprovalCap {
      XCTAssertNil(refusedCap(gate, ["title": .string("t\(index)")]), "call \(index) is under the cap")
    }
    for index in 0..<5 {
      XCTAssertEqual(refusedCap(gate, ["title": .string("over\(index)")]), "pending-approvals")
    }
    XCTAssertEqual(try pending(), TaskStore.pendingApprovalCap)
    let refusals = try store.receipts().filter { $0.summary.contains("approval queue is full") }
    XCTAssertEqual(refusals.count, 5, "every refusal leaves a receipt")
    XCTAssertTrue(refusals.allSatisfy { $0.keyID == AssistantKeyID("tkid_00000000000000aa") })
    XCTAssertEqual(Set(refusals.map(\.decision)), [.refuse(.queueFull)], "the receipt names the cap, not the budget")
    // Another key's queue is its own.
    XCTAssertNil(refusedCap(toolbox("tkid_00000000000000bb"), ["title": "other"]))
    // Once the user decides one, the key may queue one more.
    let first = try XCTUnwrap(store.approvals(pendingOnly: true).first)
    XCTAssertTrue(try store.resolveApproval(id: first.id, approved: false))
    XCTAssertNil(refusedCap(gate, ["title": "after a denial"]))
    XCTAssertEqual(try pending(), TaskStore.pendingApprovalCap)
  }

  func testQueueingPastTheByteCapIsRefusedAndTheBytesStayUnderIt() throws {
    let gate = toolbox()
    let note = String(repeating: "n", count: 200 * 1024)
    var refused: String?
    var calls = 0
    while refused == nil, calls < TaskStore.pendingApprovalCap {
      refused = refusedCap(gate, ["title": "big", "notes": .string(note)])
      calls += 1
    }
    XCTAssertEqual(refused, "pending-argument-bytes")
    XCTAssertLessThan(try pending(), TaskStore.pendingApprovalCap)
    XCTAssertLessThanOrEqual(
      try store.pendingApprovalLoad(keyID: XCTUnwrap(AssistantKeyID("tkid_00000000000000aa"))).bytes,
      TaskStore.pendingArgumentBytesCap)
    // A small call still fits beside the queued ones.
    XCTAssertNil(refusedCap(gate, ["title": "small"]))
  }
}
