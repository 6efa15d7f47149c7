import AssistantKeys
import CommandKit
import Foundation
import TaskCrypto
import TaskerCore
import TaskerGate
import TaskerTestSupport
import XCTest

/// What a key may read (SECURITY.md §8, "What a key may read"): a key
/// without `notes:read` searches titles only, sees no contexts in list or
/// search results, and cannot learn contexts from which tasks match, how
/// many, their order or the errors; `tools/list` shows a key only the
/// tools its grants allow.
final class GateReadFilterTests: XCTestCase {
  private var directory: TemporaryDirectory!
  private var store: TaskStore!
  private let secret = "@clinic hiv-followup dr-smith room 12"

  override func setUpWithError() throws {
    directory = try TemporaryDirectory()
    store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
    var first = TaskDraft(title: "Call back")
    first.contexts = secret
    first.notes = "bring the letter"
    _ = try store.addTask(first)
    var second = TaskDraft(title: "Call the bank")
    second.contexts = "@home errands"
    _ = try store.addTask(second)
  }

  private func toolbox(grants: Set<GateGrant>) -> GateToolbox {
    GateToolbox(
      store: store,
      identity: GateIdentity(
        keyID: AssistantKeyID("tkid_00000000000000aa"), name: "bot", trust: .standard, grants: grants),
      vaultDirectory: nil)
  }

  /// The error code a call throws, nil when it returns.
  private func refusal(_ toolbox: GateToolbox, _ name: String, _ arguments: [String: JSONValue]) -> Int64? {
    let run: () throws -> MCPToolResult = { try toolbox.callTool(name: name, arguments: arguments) }
    do {
      _ = try run()
      return nil
    } catch let error as MCPError {
      return error.code
    } catch {
      return -1
    }
  }

  private func ids(_ result: MCPToolResult) -> [Int64] {
    guard case .array(let tasks)? = result.content["tasks"] else { return [] }
    return tasks.compactMap { $0["id"]?.integerValue }
  }

  func testAWordOnlyInContextsIsFoundOnlyWithNotesRead() throws {
    let blind = try toolbox(grants: []).callTool(name: "search_tasks", arguments: ["query": "hiv-followup"])
    XCTAssertFalse(blind.isError)
    XCTAssertEqual(ids(blind), [], "a key without notes:read searches titles only")
    let reader = try toolbox(grants: [.notesRead]).callTool(name: "search_tasks", arguments: ["query": "hiv-followup"])
    XCTAssertEqual(ids(reader), [1], "with notes:read the contexts are searched")
    let trusted = try GateToolbox.trusted(store: store, vaultDirectory: nil)
      .callTool(name: "search_tasks", arguments: ["query": "hiv-followup"])
    XCTAssertEqual(ids(trusted), [1], "trusted mode searches contexts")
    XCTAssertEqual(try store.searchTasks("hiv-followup").map(\.id), [1], "the user's own search still matches contexts")
  }

  func testListAndSearchResultsCarryNoContextsWithoutNotesRead() throws {
    let keys = toolbox(grants: [.tasksWrite, .pagesWrite])
    for (name, arguments) in [
      ("list_tasks", ["status": "all"] as [String: JSONValue]), ("search_tasks", ["query": "Call"]),
    ] {
      let result = try keys.callTool(name: name, arguments: arguments)
      XCTAssertEqual(ids(result), [1, 2], name)
      XCTAssertFalse(result.content.text.contains("clinic"), "\(name) shows no contexts: \(result.content.text)")
      XCTAssertFalse(result.content.text.contains("errands"), name)
      XCTAssertFalse(result.summary.contains("clinic"), name)
      guard case .array(let tasks)? = result.content["tasks"] else { return XCTFail(name) }
      for task in tasks { XCTAssertNil(task["contexts"], name) }
    }
    // Nor anything derived from contexts: no task is found through them.
    for query in ["clinic", "errands", "@"] {
      let result = try keys.callTool(name: "search_tasks", arguments: ["query": .string(query)])
      XCTAssertEqual(ids(result), [], "'\(query)' is only in contexts")
    }
    // Asking for contexts without the grant is refused, whatever the contexts hold.
    XCTAssertThrowsError(
      try keys.callTool(name: "search_tasks", arguments: ["query": "Call", "include_notes": true]))
  }

  func testAPrefixOracleOverTheContextsLearnsNothing() throws {
    let keys = toolbox(grants: [.tasksWrite])
    // The attack of issue 23: extend a known prefix one character at a
    // time and watch which probe matches (from the '@' every context
    // starts with, so no probe is a title's text). Every probe answers alike.
    let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789 -@")
    var answers: Set<String> = []
    var probes = 0
    for length in 2...secret.count {
      let known = String(secret.prefix(length - 1))
      for character in alphabet {
        let result = try keys.callTool(name: "search_tasks", arguments: ["query": .string(known + String(character))])
        answers.insert("\(result.isError) \(result.content.text) \(result.summary)")
        probes += 1
      }
    }
    XCTAssertGreaterThan(probes, 1_000)
    XCTAssertEqual(answers.count, 1, "every probe's result is identical: \(answers.sorted().prefix(3))")
    // Order and count among title matches follow due date and id only.
    var changes = TaskChanges()
    changes.contexts = "@aaa"
    _ = try store.editTask(id: 2, changes)
    let ordered = try keys.callTool(name: "search_tasks", arguments: ["query": "Call", "limit": 1])
    XCTAssertEqual(ids(ordered), [1])
  }

  func testToolsListShowsAKeyOnlyTheToolsItsGrantsAllow() throws {
    let reads = ["list_tasks", "search_tasks", "show_task"]
    let writes = ["add_task", "edit_task", "complete_task", "delete_task"]
    XCTAssertEqual(toolbox(grants: []).tools.map(\.name), reads, "no grant: the reads that need none")
    XCTAssertEqual(toolbox(grants: [.tasksWrite]).tools.map(\.name), reads + writes)
    XCTAssertEqual(toolbox(grants: [.pagesWrite]).tools.map(\.name), reads + ["add_page"])
    XCTAssertEqual(toolbox(grants: [.notesRead]).tools.map(\.name), reads + ["read_note"])
    XCTAssertEqual(toolbox(grants: Set(GateGrant.allCases)).tools.map(\.name), GateTools.catalog.map(\.name))
    XCTAssertEqual(
      GateToolbox.trusted(store: store, vaultDirectory: nil).tools.map(\.name), GateTools.catalog.map(\.name),
      "trusted mode lists every tool")
  }

  func testEveryListedToolIsOneTheKeyMayCall() throws {
    let minimal: [String: [String: JSONValue]] = [
      "list_tasks": [:], "search_tasks": ["query": "x"], "show_task": ["id": 1], "add_task": ["title": "x"],
      "edit_task": ["ids": [1], "title": "y"], "complete_task": ["id": 2], "delete_task": ["id": 2],
      "add_page": ["title": "p"], "read_note": ["id": 1],
    ]
    XCTAssertEqual(Set(minimal.keys), Set(GateTools.catalog.map(\.name)))
    for grants in [[], [GateGrant.tasksWrite], [.pagesWrite], [.notesRead]] as [Set<GateGrant>] {
      let keys = toolbox(grants: grants)
      for tool in keys.tools {
        XCTAssertNotEqual(
          refusal(keys, tool.name, minimal[tool.name] ?? [:]), MCPError.insufficientScopeCode,
          "\(tool.name) is listed to a key with \(grants) but refused")
      }
    }
  }
}
