import CommandKit
import TaskerCore
import TaskerGate
import XCTest

final class GateCallTests: XCTestCase {
  private func refusal(_ tool: String, _ arguments: [String: JSONValue]) -> String? {
    do {
      _ = try GateCall.parse(tool: tool, arguments: arguments)
      return nil
    } catch {
      XCTAssertEqual(error.code, MCPError.invalidParamsCode)
      return error.message
    }
  }

  func testEveryToolHasACompleteClosedObjectSchema() {
    XCTAssertEqual(GateTools.catalog.count, 9)
    for tool in GateTools.catalog {
      XCTAssertEqual(tool.inputSchema["type"], "object", tool.name)
      XCTAssertEqual(tool.inputSchema["additionalProperties"], false, tool.name)
      guard case .object(let properties)? = tool.inputSchema["properties"] else { return XCTFail(tool.name) }
      for (name, schema) in properties { XCTAssertNotNil(schema["type"], "\(tool.name).\(name)") }
    }
  }

  func testTheCatalogIsTheGateToolsAndNothingElse() {
    let offered = GateTool.allCases.filter { $0 != .undo && $0 != .deletePage }
    XCTAssertEqual(GateTools.catalog.map(\.name), offered.map(\.rawValue), "one tool per case, in case order")
  }

  func testAnUnknownToolIsATypedRefusalNeverARead() {
    // The command line's own words are no gate tool; neither is anything else.
    for name in ["undo", "delete_page", "read_notes", "READ_NOTE", "", "drop_table"] {
      XCTAssertEqual(
        refusal(name, ["id": 1]), "unknown tool '\(name)'; tools/list names the tools this gate has", name)
    }
  }

  func testEveryCallNamesItsTool() throws {
    for tool in GateTools.catalog {
      var arguments: [String: JSONValue] = [:]
      guard case .array(let required)? = tool.inputSchema["required"] else { return XCTFail(tool.name) }
      for case .string(let name) in required {
        arguments[name] = name == "ids" ? [1] : name == "id" ? 1 : "x"
      }
      if tool.name == "edit_task" { arguments["title"] = "t" }
      XCTAssertEqual(try GateCall.parse(tool: tool.name, arguments: arguments).tool.rawValue, tool.name)
    }
  }

  func testCallsMapToTheirActions() throws {
    let cases: [(String, [String: JSONValue], GateAction)] = [
      ("list_tasks", [:], .readTasks), ("list_tasks", ["include_notes": true], .readNotes),
      ("search_tasks", ["query": "x"], .readTasks), ("show_task", ["id": 1], .readTasks),
      ("read_note", ["id": 1], .readNotes), ("add_task", ["title": "t"], .addTask),
      ("edit_task", ["ids": [1], "title": "t"], .editTask), ("edit_task", ["ids": [1, 2], "title": "t"], .bulkEdit),
      ("complete_task", ["id": 1], .completeTask), ("delete_task", ["id": 1], .deleteTask),
      ("add_page", ["title": "p"], .addPage),
    ]
    for (tool, arguments, action) in cases {
      XCTAssertEqual(try GateCall.parse(tool: tool, arguments: arguments).action, action, "\(tool) \(arguments)")
    }
  }

  func testArgumentsAreCheckedAgainstTheSchema() {
    XCTAssertEqual(refusal("nope", [:]), "unknown tool 'nope'; tools/list names the tools this gate has")
    XCTAssertEqual(refusal("add_task", [:]), "add_task: the argument 'title' is required")
    XCTAssertEqual(refusal("add_task", ["title": ""]), "add_task: 'title' must not be empty")
    XCTAssertEqual(refusal("add_task", ["title": 5]), "add_task: 'title' must be string, not integer")
    XCTAssertTrue(refusal("add_task", ["title": "t", "colour": "red"])?.contains("unknown argument 'colour'") ?? false)
    XCTAssertEqual(
      refusal("add_task", ["title": "t", "due": "2026-02-30"]),
      "add_task: 'due' must be a calendar day written YYYY-MM-DD")
    XCTAssertEqual(
      refusal("add_task", ["title": "t", "priority": "urgent"]),
      "add_task: 'priority' must be one of \"none\", \"low\", \"medium\", \"high\"")
    XCTAssertEqual(
      refusal("add_task", ["title": "t", "estimate_minutes": -1]), "add_task: 'estimate_minutes' must be ≥ 0")
    XCTAssertEqual(refusal("show_task", ["id": 0]), "show_task: 'id' must be ≥ 1")
    XCTAssertEqual(refusal("list_tasks", ["limit": 501]), "list_tasks: 'limit' must be ≤ 500")
    XCTAssertEqual(refusal("edit_task", ["ids": [], "title": "t"]), "edit_task: 'ids' needs at least 1 item(s)")
    XCTAssertEqual(refusal("edit_task", ["ids": [1, 1], "title": "t"]), "edit_task: 'ids' must not repeat an item")
    XCTAssertEqual(refusal("edit_task", ["ids": [1]]), "edit_task: give at least one field to change")
    XCTAssertEqual(
      refusal("add_task", ["title": .string(String(repeating: "x", count: 501))]),
      "add_task: 'title' is longer than 500 bytes of UTF-8")
    // Bytes, not characters (issue 23): 251 × "é" is 502 bytes; one grapheme cluster of 800,001 bytes.
    XCTAssertEqual(
      refusal("add_task", ["title": .string(String(repeating: "é", count: 251))]),
      "add_task: 'title' is longer than 500 bytes of UTF-8")
    XCTAssertNil(refusal("add_task", ["title": .string(String(repeating: "é", count: 250))]))
    XCTAssertEqual(
      refusal("add_task", ["title": .string("e" + String(repeating: "\u{301}", count: 400_000))]),
      "add_task: 'title' is longer than 500 bytes of UTF-8")
    XCTAssertEqual(
      refusal("add_task", ["title": "t", "notes": .string(String(repeating: "é", count: 204_800))]),
      "add_task: 'notes' is longer than 262144 bytes of UTF-8")
    XCTAssertEqual(
      refusal("search_tasks", ["query": .string("a" + String(repeating: "\u{301}", count: 100_000))]),
      "search_tasks: 'query' is longer than 200 bytes of UTF-8")
  }

  func testNullClearsOptionalFieldsInAnEdit() throws {
    guard
      case .editTasks(_, let changes) = try GateCall.parse(
        tool: "edit_task", arguments: ["ids": [3], "due": .null, "energy": .null, "estimate_minutes": .null])
    else { return XCTFail("not an edit") }
    XCTAssertEqual(changes.due, .some(nil))
    XCTAssertEqual(changes.energy, .some(nil))
    XCTAssertEqual(changes.estimateMinutes, .some(nil))
    XCTAssertNil(changes.title)
  }
}
