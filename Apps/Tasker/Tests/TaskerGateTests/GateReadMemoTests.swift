import AssistantKeys
import CommandKit
import Foundation
import TaskCrypto
import TaskerCore
import TaskerTestSupport
import XCTest

@testable import TaskerGate

/// Remembered answers (`GateReadMemo`): given again only while no
/// connection changed the database, byte for byte what running the call
/// gives, never for a call with note text, and never shared between
/// callers or days whose answers differ.
final class GateReadMemoTests: XCTestCase {
  private var directory: TemporaryDirectory!
  private var keyring: Keyring!
  /// The one connection of the pool under test.
  private var store: TaskStore!
  private var pool: GateStorePool!
  private var now = Date(timeIntervalSince1970: 1_800_000_000)
  private let reader = AssistantKeyID("tkid_00000000000000c1")!
  private let titlesOnly = AssistantKeyID("tkid_00000000000000c2")!
  private let utc = Calendar.gregorianUTC

  override func setUpWithError() throws {
    directory = try TemporaryDirectory()
    (keyring, store) = try directory.newStore()
    var draft = TaskDraft(title: "buy \"milk\" \\ café ☕️ e\u{301}", notes: "first note")
    draft.contexts = "@errand"
    draft.priority = .high
    draft.due = try CalendarDate(parsing: "2027-01-15")
    _ = try store.addTask(draft)
    _ = try store.addTask(TaskDraft(title: "write\u{2028}report"))
    pool = GateStorePool(stores: [store]) { [unowned self] in try self.connection() }
  }

  /// A new connection to the test database, as another process opens it.
  private func connection() throws -> TaskStore {
    try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
  }

  private func toolbox(_ keyID: AssistantKeyID, contexts: Bool, stores: GateStorePool? = nil) -> GateToolbox {
    GateToolbox(
      stores: stores ?? pool,
      identity: GateIdentity(
        keyID: keyID, name: "bot", trust: .standard, grants: contexts ? [.tasksWrite, .notesRead] : [.tasksWrite]),
      clock: { [unowned self] in self.now }, calendar: utc, vaultDirectory: nil)
  }

  private func text(_ result: MCPToolResult) -> String {
    XCTAssertFalse(result.isError, "\(result.json)")
    return String(decoding: result.encoded, as: UTF8.self)
  }

  private func list(_ gate: GateToolbox, notes: Bool = false) throws -> MCPToolResult {
    try gate.callTool(name: "list_tasks", arguments: notes ? ["include_notes": true] : [:])
  }

  private func search(_ gate: GateToolbox, _ query: String) throws -> MCPToolResult {
    try gate.callTool(name: "search_tasks", arguments: ["query": .string(query)])
  }

  /// The memo key `list_tasks` without arguments is remembered under now.
  private func listKey(contexts: Bool) throws -> String {
    try XCTUnwrap(
      GateToolbox.memoKey(
        try GateCall.parse(tool: "list_tasks", arguments: [:]), mayReadContexts: contexts,
        today: CalendarDate.today(now: now, timeZone: utc.timeZone)))
  }

  func testARememberedListIsByteForByteAFreshOne() throws {
    let gate = toolbox(reader, contexts: true)
    let first = try list(gate)
    let second = try list(gate)
    XCTAssertEqual(second.encoded, first.encoded)
    // The second came from the memo: it holds the answer, unchanged.
    let key = try listKey(contexts: true)
    let kept = try pool.lend { memo in
      try memo.answer(key) {
        XCTFail("the answer was not remembered")
        return MCPToolResult(content: [:], summary: "")
      }
    }
    XCTAssertEqual(kept, first)
    // A fresh run on another process's connection, with nothing remembered.
    let fresh = try list(toolbox(reader, contexts: true, stores: GateStorePool(single: try connection())))
    XCTAssertEqual(kept.encoded, fresh.encoded)
    XCTAssertEqual(kept.encoded, kept.json.encoded)
    XCTAssertTrue(text(fresh).contains("buy"))
  }

  func testAWriteByAnotherConnectionIsSeenAtTheNextCall() throws {
    let gate = toolbox(reader, contexts: true)
    _ = try list(gate)
    XCTAssertFalse(text(try list(gate)).contains("from another process"))
    let other = try connection()
    _ = try other.addTask(TaskDraft(title: "from another process"))
    XCTAssertTrue(text(try list(gate)).contains("from another process"))
    var changes = TaskChanges()
    changes.title = "renamed elsewhere"
    _ = try other.editTask(id: 2, changes)
    let listed = text(try list(gate))
    XCTAssertTrue(listed.contains("renamed elsewhere"))
    XCTAssertFalse(listed.contains("report"))
    XCTAssertTrue(text(try search(gate, "renamed")).contains("renamed elsewhere"))
  }

  func testAWriteOnTheSameConnectionIsSeenAtTheNextCall() throws {
    let gate = toolbox(reader, contexts: true)
    _ = try list(gate)
    _ = try search(gate, "same")
    XCTAssertFalse(text(try list(gate)).contains("same connection"))
    XCTAssertFalse(text(try search(gate, "same")).contains("same connection"))
    _ = try store.addTask(TaskDraft(title: "same connection"))
    XCTAssertTrue(text(try list(gate)).contains("same connection"))
    XCTAssertTrue(text(try search(gate, "same")).contains("same connection"))
    // The gate's own acting call runs on the pool's one connection too.
    _ = try gate.callTool(name: "add_task", arguments: ["title": "added through the gate"])
    XCTAssertTrue(text(try list(gate)).contains("added through the gate"))
    _ = try gate.callTool(name: "complete_task", arguments: ["id": 1])
    XCTAssertTrue(text(try gate.callTool(name: "list_tasks", arguments: ["status": "done"])).contains("buy"))
    XCTAssertFalse(text(try list(gate)).contains("buy"))
  }

  func testACallWithNoteTextIsNeverRemembered() throws {
    let today = CalendarDate.today(now: now, timeZone: utc.timeZone)
    for call in [
      GateCall.listTasks(filter: .open, includeNotes: true, limit: 100),
      .searchTasks(query: "buy", includeNotes: true, limit: 100), .showTask(id: 1, includeNotes: false),
    ] {
      for contexts in [false, true] {
        XCTAssertNil(GateToolbox.memoKey(call, mayReadContexts: contexts, today: today), "\(call)")
      }
    }
    let gate = toolbox(reader, contexts: true)
    XCTAssertTrue(text(try list(gate, notes: true)).contains("first note"))
    var changes = TaskChanges()
    changes.notes = "second note"
    _ = try connection().editTask(id: 1, changes)
    let listed = text(try list(gate, notes: true))
    XCTAssertTrue(listed.contains("second note"))
    XCTAssertFalse(listed.contains("first note"))
    let found = text(try gate.callTool(name: "search_tasks", arguments: ["query": "buy", "include_notes": true]))
    XCTAssertTrue(found.contains("second note"))
  }

  func testCallersThatMayAndMayNotReadContextsNeverShareAnAnswer() throws {
    XCTAssertNotEqual(try listKey(contexts: true), try listKey(contexts: false))
    for order in [[true, false], [false, true]] {
      let gates = [true: toolbox(reader, contexts: true), false: toolbox(titlesOnly, contexts: false)]
      // Each key first reserves its block, so the searches below write
      // nothing and the connection's stamp stands still between them.
      for gate in gates.values { _ = try search(gate, "warm up") }
      var answers: [Bool: String] = [:]
      for contexts in order { answers[contexts] = text(try search(gates[contexts]!, "errand")) }
      XCTAssertTrue(answers[true]!.contains("buy"), "contexts are searched for a key with notes:read")
      XCTAssertFalse(answers[false]!.contains("buy"), "and never for one without, in either order: \(order)")
      for contexts in order {
        XCTAssertEqual(text(try search(gates[contexts]!, "errand")), answers[contexts], "each is remembered apart")
      }
      pool.giveBackAllReads()
    }
  }

  func testAnotherDayIsAnotherAnswer() throws {
    // Trusted mode writes nothing for a read, so only the day differs.
    let gate = GateToolbox.trusted(
      store: store, clock: { [unowned self] in self.now }, calendar: utc, vaultDirectory: nil)
    now = try XCTUnwrap(utc.date(from: DateComponents(year: 2027, month: 1, day: 15, hour: 12)))
    let dueDay = text(try list(gate))
    XCTAssertEqual(text(try list(gate)), dueDay)
    XCTAssertFalse(dueDay.contains(#""overdue":true"#))
    now += 86_400
    let dayAfter = text(try list(gate))
    XCTAssertTrue(dayAfter.contains(#""overdue":true"#), dayAfter)
    now -= 86_400
    XCTAssertEqual(text(try list(gate)), dueDay)
    now += 86_400
    XCTAssertTrue(text(try search(gate, "buy")).contains(#""overdue":true"#))
    now -= 86_400
    XCTAssertFalse(text(try search(gate, "buy")).contains(#""overdue":true"#))
  }
}
