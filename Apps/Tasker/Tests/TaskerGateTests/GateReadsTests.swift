import AssistantKeys
import CommandKit
import Foundation
import TaskCrypto
import TaskerCore
import TaskerGate
import TaskerTestSupport
import XCTest

/// Issue 23: reads are budgeted and leave aggregated receipts; refusals
/// past a per-key limit are tallied, not written one by one.
final class GateReadsTests: XCTestCase {
  private var directory: TemporaryDirectory!
  private var store: TaskStore!
  private var now = Date(timeIntervalSince1970: 1_800_000_000)
  private let keyID = AssistantKeyID("tkid_00000000000000aa")!
  private var utc: Calendar {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar
  }

  override func setUpWithError() throws {
    directory = try TemporaryDirectory()
    store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
  }

  private func toolbox(grants: Set<GateGrant> = [.tasksWrite, .notesRead]) -> GateToolbox {
    GateToolbox(
      store: store, identity: GateIdentity(keyID: keyID, name: "bot", trust: .standard, grants: grants),
      clock: { [unowned self] in self.now }, calendar: utc, vaultDirectory: nil)
  }

  private func refusal(_ body: () throws -> MCPToolResult) -> MCPError? {
    do {
      _ = try body()
      return nil
    } catch {
      return error as? MCPError
    }
  }

  func testAnExhaustedReadBudgetIsRefusedWithDataNamingIt() throws {
    try store.setGateSetting("read-budget." + keyID.text, "3")
    let gate = toolbox()
    for _ in 0..<3 { XCTAssertNil(refusal { try gate.callTool(name: "list_tasks", arguments: [:]) }) }
    let refused = try XCTUnwrap(refusal { try gate.callTool(name: "search_tasks", arguments: ["query": "x"]) })
    XCTAssertEqual(refused.code, MCPError.refusedCode)
    XCTAssertEqual(refused.data?["budget"], "reads")
    XCTAssertEqual(refused.data?["limit"], 3)
    XCTAssertNil(refusal { try gate.callTool(name: "add_task", arguments: ["title": "t"]) }, "actions are apart")
    let receipts = try store.receipts()
    XCTAssertEqual(receipts.first { $0.tool == .searchTasks }?.decision, .refuse(.readBudgetExhausted))
    // The next day has room again.
    now += 86_400
    XCTAssertNil(refusal { try gate.callTool(name: "list_tasks", arguments: [:]) })
  }

  func testADamagedReadBudgetRefusesReads() throws {
    try store.setGateSetting("read-budget.default", "lots")
    let refused = try XCTUnwrap(refusal { try self.toolbox().callTool(name: "list_tasks", arguments: [:]) })
    XCTAssertEqual(refused.code, MCPError.refusedCode)
    XCTAssertEqual(refused.data?["budget"], "reads")
    XCTAssertEqual(try store.receipts().first?.decision, .refuse(.readBudgetUndecidable))
  }

  func testReadsBecomeOneChainedReceiptPerToolAndWindow() throws {
    let gate = toolbox()
    _ = try gate.callTool(name: "add_task", arguments: ["title": "t"])
    for _ in 0..<5 { _ = try gate.callTool(name: "list_tasks", arguments: [:]) }
    for _ in 0..<2 { _ = try gate.callTool(name: "show_task", arguments: ["id": 1]) }
    XCTAssertEqual(try store.receipts().count, 1, "an open window is not a receipt yet")
    now += 3_600
    _ = try gate.callTool(name: "list_tasks", arguments: [:])
    let folded = try store.receipts().filter { $0.decision == .read }
    XCTAssertEqual(Set(folded.map { "\($0.tool.rawValue) \($0.target)" }), ["list_tasks reads/5", "show_task reads/2"])
    XCTAssertTrue(folded.allSatisfy { $0.keyID == keyID && $0.undo == nil && $0.approval == nil })
    // The listing folds the open window too, so nothing counted is missing.
    try store.foldTallies(now: Int64(now.timeIntervalSince1970))
    XCTAssertEqual(try store.receipts().first?.target, "reads/1")
    XCTAssertEqual(try store.verifyReceipts().outcome, .intact)
    XCTAssertEqual(try store.tallied(.read, keyID: keyID, since: 0), 8, "the day's count keeps folded tallies")
  }

  func testTrustedModeIsNeitherBudgetedNorReceipted() throws {
    try store.setGateSetting("read-budget.default", "0")
    let gate = GateToolbox.trusted(
      store: store, clock: { [unowned self] in self.now }, calendar: utc, vaultDirectory: nil)
    for _ in 0..<5 { XCTAssertNil(refusal { try gate.callTool(name: "list_tasks", arguments: [:]) }) }
    try store.foldTallies(now: Int64(now.timeIntervalSince1970))
    XCTAssertEqual(try store.receipts().count, 0)
  }

  /// The break: 3,000 refusals left 3,000 receipts and buried the view.
  func testThreeThousandRefusalsLeaveAHandfulOfRows() throws {
    try store.setGateSetting("budget." + keyID.text, "0")
    let gate = toolbox()
    for index in 0..<3_000 {
      let tool = index.isMultiple(of: 2) ? "add_task" : "complete_task"
      let arguments: [String: JSONValue] = tool == "add_task" ? ["title": "t"] : ["id": 1]
      XCTAssertEqual(refusal { try gate.callTool(name: tool, arguments: arguments) }?.code, MCPError.refusedCode)
    }
    try store.foldTallies(now: Int64(now.timeIntervalSince1970))
    let receipts = try store.receipts(limit: 10_000)
    // The limit's refusals of a window one by one, then one per tool: at
    // most two windows if the test ran across an hour.
    XCTAssertLessThanOrEqual(receipts.count, 2 * (TaskStore.refusalReceiptLimit + 2), "\(receipts.count) rows")
    let counted = receipts.reduce(0) { sum, receipt in
      receipt.decision == .refuse(.rateLimited) ? sum + Int(receipt.target.dropFirst("refusals/".count))! : sum + 1
    }
    XCTAssertEqual(counted, 3_000, "every refusal is counted, one by one or in an aggregate")
    XCTAssertEqual(try store.verifyReceipts().outcome, .intact)
  }
}
