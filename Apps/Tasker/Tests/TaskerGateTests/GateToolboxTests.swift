import AssistantKeys
import CommandKit
import Foundation
import TaskCrypto
import TaskerCore
import TaskerGate
import TaskerTestSupport
import XCTest

final class GateToolboxTests: XCTestCase {
  private var directory: TemporaryDirectory!
  private var store: TaskStore!
  private var now = Date(timeIntervalSince1970: 1_800_000_000)
  private var utc: Calendar {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar
  }

  override func setUpWithError() throws {
    directory = try TemporaryDirectory()
    store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
  }

  private func toolbox(_ trust: TrustLevel = .standard, grants: Set<GateGrant> = [.tasksWrite]) -> GateToolbox {
    GateToolbox(
      store: store,
      identity: GateIdentity(keyID: AssistantKeyID("tkid_00000000000000aa"), name: "bot", trust: trust, grants: grants),
      clock: { [unowned self] in self.now }, calendar: utc)
  }

  private func call(_ toolbox: GateToolbox, _ name: String, _ arguments: [String: JSONValue]) throws -> MCPToolResult {
    try toolbox.callTool(name: name, arguments: arguments)
  }

  private func code(_ body: () throws -> MCPToolResult) -> Int64? {
    do {
      _ = try body()
      return nil
    } catch let error as MCPError {
      return error.code
    } catch {
      return -1
    }
  }

  func testAnAllowedActionAndItsReceiptAreOneChange() throws {
    let result = try call(toolbox(), "add_task", ["title": "Buy milk", "notes": "canary-note"])
    XCTAssertEqual(result.content["receipt"], "r1")
    let receipts = try store.receipts()
    XCTAssertEqual(receipts.count, 1)
    XCTAssertEqual(receipts[0].decision, .allow)
    XCTAssertEqual(receipts[0].undo, ReceiptUndo(.deleteTask, 1))
    XCTAssertEqual(receipts[0].keyID, AssistantKeyID("tkid_00000000000000aa"))
    XCTAssertFalse(receipts[0].summary.contains("canary-note"), "no note text in receipts")
    XCTAssertEqual(try store.tasks(.all).count, 1)
  }

  func testAFailedActionChangesNothingAndLeavesAFailedReceipt() throws {
    let result = try call(toolbox(), "complete_task", ["id": 42])
    XCTAssertTrue(result.isError)
    XCTAssertEqual(try store.receipts().map(\.decision), [.failed])
  }

  func testPlanningFieldsOnlyWithoutTheNotesGrant() throws {
    var draft = TaskDraft(title: "Title", notes: "canary-notes")
    draft.contexts = "canary-contexts"
    draft.due = try CalendarDate(parsing: "2020-01-01")
    try store.addTask(draft)
    let listed = try call(toolbox(), "list_tasks", [:])
    XCTAssertFalse(listed.content.text.contains("canary"))
    guard case .array(let tasks)? = listed.content["tasks"], let first = tasks.first?.objectValue else {
      return XCTFail("no tasks")
    }
    XCTAssertEqual(
      Set(first.keys), Set(PlanCandidate.CodingKeys.allCases.map(\.rawValue) + ["id", "status"]))
    XCTAssertEqual(first["overdue"], true)
    XCTAssertEqual(code { try call(toolbox(), "list_tasks", ["include_notes": true]) }, MCPError.insufficientScopeCode)
    let withGrant = try call(toolbox(grants: [.notesRead]), "show_task", ["id": 1, "include_notes": true])
    XCTAssertEqual(withGrant.content["task"]?["notes"], "canary-notes")
  }

  func testTheBudgetCountsRunActionsOfTodayOnly() throws {
    now = Date()  // receipts are stamped with the real time
    try store.setGateSetting("budget.tkid_00000000000000aa", "2")
    let bot = toolbox()
    _ = try call(bot, "add_task", ["title": "one"])
    _ = try call(bot, "add_task", ["title": "two"])
    XCTAssertEqual(code { try call(bot, "add_task", ["title": "three"]) }, MCPError.refusedCode)
    XCTAssertEqual(try store.receipts().first?.decision, .refuse(.budgetExhausted))
    now += 86_400
    XCTAssertNoThrow(try call(bot, "add_task", ["title": "tomorrow"]))
  }

  func testUndecidableBudgetRefusesAndUndecidableQuietHoursAsk() throws {
    try store.setGateSetting("budget.default", "lots")
    XCTAssertEqual(code { try call(toolbox(), "add_task", ["title": "x"]) }, MCPError.refusedCode)
    XCTAssertEqual(try store.receipts().first?.decision, .refuse(.budgetUndecidable))
    try store.setGateSetting("budget.default", nil)
    try store.setGateSetting("quiet-hours", "25:00-26:00")
    let queued = try call(toolbox(), "add_task", ["title": "x"])
    XCTAssertEqual(queued.content["reason"], "quiet-hours-undecidable")
    XCTAssertEqual(try store.tasks(.all), [], "a queued call is never run")
  }

  func testQuietHoursQueueActionsButNotReads() throws {
    try store.setGateSetting("quiet-hours", "07:00-09:00")  // 1_800_000_000 is 08:00 UTC
    let queued = try call(toolbox(), "add_task", ["title": "x"])
    XCTAssertEqual(queued.content["status"], "queued")
    XCTAssertEqual(queued.content["reason"], "quiet-hours")
    XCTAssertNoThrow(try call(toolbox(), "list_tasks", [:]))
    XCTAssertEqual(try store.tasks(.all), [])
  }

  func testAQueuedCallRunsOnApprovalAsTheAssistantAndOnlyOnce() throws {
    try store.addTask(TaskDraft(title: "Old"))
    let queued = try call(toolbox(), "delete_task", ["id": 1])
    let approval = try XCTUnwrap(queued.content["approval"]?.integerValue)
    let desk = GateDesk(store: store, clock: { [unowned self] in self.now }, calendar: utc)
    XCTAssertThrowsError(
      try desk.approve(approval, checkKey: { throw GateError.keyNoLongerValid(keyID: $0.text, status: "revoked") }))
    XCTAssertEqual(try store.approvals(pendingOnly: true).count, 1, "still pending after a refused approval")
    let receipt = try desk.approve(approval, checkKey: { _ in })
    XCTAssertEqual(receipt.decision, .approved)
    XCTAssertEqual(receipt.keyID, AssistantKeyID("tkid_00000000000000aa"))
    XCTAssertEqual(try store.tasks(.all), [])
    XCTAssertThrowsError(try desk.approve(approval, checkKey: { _ in })) {
      XCTAssertEqual($0 as? GateError, .approvalNotPending(approval))
    }
    XCTAssertThrowsError(try desk.deny(approval))
  }

  func testUndoReversesAdditionsAndCompletionsOnce() throws {
    let bot = toolbox()
    _ = try call(bot, "add_task", ["title": "a"])
    _ = try call(bot, "add_task", ["title": "b"])
    _ = try call(bot, "complete_task", ["id": 2])
    _ = try call(bot, "edit_task", ["ids": [2], "title": "b2"])
    let desk = GateDesk(store: store)
    XCTAssertEqual(try desk.undo(1).undoes, 1)
    XCTAssertEqual(try desk.undo(3).summary, "undid r3: reopened task 2")
    XCTAssertEqual(try store.tasks(.all).map(\.title), ["b2"])
    XCTAssertEqual(try store.tasks(.all).map(\.status), [.open])
    XCTAssertThrowsError(try desk.undo(1)) { XCTAssertEqual($0 as? GateError, .alreadyUndone(1, by: 5)) }
    XCTAssertThrowsError(try desk.undo(4)) {
      XCTAssertEqual($0 as? GateError, .notUndoable(4, reason: "edit_task with decision allow has no undo"))
    }
    XCTAssertThrowsError(try desk.undo(99)) { XCTAssertEqual($0 as? GateError, .receiptNotFound(99)) }
  }

  func testTrustedModeActsWithoutGrantsAndLeavesTrustedReceipts() throws {
    let trusted = GateToolbox.trusted(store: store, clock: { [unowned self] in self.now }, calendar: utc)
    _ = try trusted.callTool(name: "add_task", arguments: ["title": "mine", "notes": "n"])
    _ = try trusted.callTool(name: "delete_task", arguments: ["id": 1])
    XCTAssertEqual(try trusted.callTool(name: "read_note", arguments: ["id": 1]).isError, true)
    XCTAssertEqual(try store.receipts().map(\.actor), [.trusted, .trusted])
  }
}
