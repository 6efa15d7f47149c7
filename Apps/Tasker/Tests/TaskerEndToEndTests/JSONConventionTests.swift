import Foundation
import TaskerTestSupport
import Testing

/// The one JSON convention (docs/json-output.md, issue 21 goal 3), checked
/// on the real output of every `tasker` command whose `--help` offers
/// `--json`, on a real temporary home. The declared top-level fields come
/// from the page's table, which the test keeps equal to the commands: a
/// command with `--json` that the test does not run, a row with no such
/// command, or an output with other keys fails. (This target runs the
/// binary and does not import TaskerCLI, so the page is where the test
/// reads each command's `JSONShape`.)
@Suite("tasker: one JSON convention")
struct JSONConventionTests {
  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// docs/json-output.md's table for `tasker`: command words → fields.
  static func documented() throws -> [[String]: [String]] {
    let text = try String(
      contentsOf: repository.appendingPathComponent("docs/json-output.md"), encoding: .utf8)
    var table = [[String]: [String]]()
    for line in text.split(separator: "\n") where line.hasPrefix("| `tasker ") {
      let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      let path = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")).split(separator: " ").dropFirst()
      // The fields are the quoted words before a parenthesised condition.
      table[path.map(String.init)] = cells[1].prefix { $0 != "(" }.split(separator: ",")
        .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }
    }
    return table
  }

  /// What in `value` breaks the page's rules for keys, ids, times and
  /// dates, at every depth; empty when nothing does.
  static func breaks(_ value: Any, at path: String = "$") -> [String] {
    if let array = value as? [Any] {
      return array.enumerated().flatMap { breaks($0.element, at: "\(path)[\($0.offset)]") }
    }
    guard let object = value as? [String: Any] else { return [] }
    var found = [String]()
    func matches(_ value: Any, _ pattern: String) -> Bool {
      value is NSNull || (value as? String)?.range(of: pattern, options: .regularExpression) != nil
    }
    for (key, member) in object {
      let place = "\(path).\(key)"
      if key.range(of: #"^[a-z][a-z0-9_]*$"#, options: .regularExpression) == nil {
        found.append("\(place): not snake_case")
      }
      if key == "id" || key.hasSuffix("_id"), !(member is NSNull || member is String) {
        found.append("\(place): an id that is not a string or null")
      }
      let times = ["at", "created", "completed", "updated", "modified", "expires", "last_used"]
      if times.contains(key) || key.hasSuffix("_at") || key.hasSuffix("_until"),
        !matches(member, #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"#)
      {
        found.append("\(place): \(member) is not an RFC 3339 UTC time or null")
      }
      if key == "due", !matches(member, #"^\d{4}-\d{2}-\d{2}$"#) { found.append("\(place): not YYYY-MM-DD or null") }
      found += breaks(member, at: place)
    }
    return found
  }

  /// The key lists of every object in compact JSON text whose keys are not
  /// sorted (JSONSerialization keeps no order, so the text is scanned).
  static func unsortedObjects(_ bytes: [UInt8]) -> [[String]] {
    var open: [[String]?] = []  // nil for an array
    var unsorted = [[String]]()
    var index = 0
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: "{"): open.append([])
      case UInt8(ascii: "["): open.append(nil)
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        if let keys = open.popLast() ?? nil, keys != keys.sorted() { unsorted.append(keys) }
      case UInt8(ascii: "\""):
        var end = index + 1
        while bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
        if end + 1 < bytes.count, bytes[end + 1] == UInt8(ascii: ":"), let last = open.indices.last, open[last] != nil {
          open[last]!.append(String(decoding: bytes[(index + 1)..<end], as: UTF8.self))
        }
        index = end
      default: break
      }
      index += 1
    }
    return unsorted
  }

  @Test func everyCommandWithJSONFollowsTheConvention() throws {
    let device = try TestDevice()
    let table = try Self.documented()
    var checked = Set<[String]>()
    @discardableResult
    func run(_ path: [String], _ rest: [String] = [], input: String = "", status: Int32 = 0) throws -> [String: Any] {
      let name = path.joined(separator: " ")
      let result = try device.tasker(path + rest + ["--json"], input: input)
      checked.insert(path)
      #expect(result.status == status, "\(name): \(result.status) \(result.stderr)")
      let text = result.stdoutText
      #expect(text.hasSuffix("\n") && text.filter { $0 == "\n" }.count == 1, "\(name): not one line: \(text)")
      let object = try #require(try result.json() as? [String: Any], "\(name): the top level is not an object")
      let declared = try #require(table[path], "\(name) has no row in docs/json-output.md")
      #expect(Set(object.keys) == Set(declared) && declared.count == object.count, "\(name): \(object.keys.sorted())")
      #expect(Self.breaks(object) == [], "\(name)")
      #expect(Self.unsortedObjects(result.stdout) == [], "\(name): keys not sorted")
      return object
    }
    // A new home: an empty list, exit 0.
    #expect((try run(["list"])["tasks"] as? [Any])?.isEmpty == true)
    let task = try run(["add"], ["Call the clinic", "--due", "tomorrow", "--estimate", "20"])
    #expect(task["id"] as? String == "1")
    try run(["show"], ["1"])
    try run(["edit"], ["1", "--priority", "high", "--due", "+3d"])
    try run(["done"], ["1"])
    try run(["undo"], ["1"])
    try run(["page", "new"], ["Agenda", "--body", "-"], input: "Items\n")
    try run(["page", "show"], ["1"])
    try run(["page", "edit"], ["1", "--title", "Monday agenda"])
    try run(["page", "list"])
    let file = device.root.path("results.txt")
    try "results\n".write(toFile: file, atomically: true, encoding: .utf8)
    let attachment = try run(["attach", "add"], ["--task", "1", file])
    #expect(attachment["task_id"] as? String == "1" && attachment["page_id"] is NSNull)
    try run(["attach", "list"])
    try run(["attach", "remove"], ["1"])
    try run(["plan-context"])
    try run(["encrypt"])
    try run(["rewrap"])
    try run(["keys"])
    try run(["settings"])

    // Two calls an assistant may not make alone wait for approval.
    let minted = try #require(
      try device.taskkey(["mint", "--name", "planner", "--trust", "restricted", "--grant", "tasks:write", "--json"])
        .json() as? [String: Any])
    var environment = device.environment
    environment["TASKER_ASSISTANT_KEY"] = try #require(minted["key"] as? String)
    let session = try LineProcess(.tasker, ["mcp"], environment: environment)
    try session.initializeMCP()
    for title in ["first", "second"] {
      #expect(try session.callTool("add_task", ["title": title])["status"] as? String == "queued")
    }
    #expect(session.finish().status == 0)
    let waiting = try #require(try run(["approvals", "list"])["approvals"] as? [[String: Any]])
    #expect(waiting.count == 2 && waiting.allSatisfy { ($0["key_id"] as? String)?.hasPrefix("tkid_") == true })
    #expect(try run(["list"])["pending_approvals"] as? Int == 2)
    try run(["approvals", "approve"], ["1"])
    try run(["approvals", "deny"], ["2"])
    let receipts = try #require(try run(["receipts"])["receipts"] as? [[String: Any]])
    #expect(
      !receipts.isEmpty
        && receipts.allSatisfy { ($0["id"] as? String)?.range(of: #"^r\d+$"#, options: .regularExpression) != nil },
      "\(receipts)")
    try run(["doctor"])
    try run(["gate", "budget"], ["20"])
    try run(["gate", "quiet-hours"], ["22:00-07:00"])
    try run(["gate", "show"])
    try run(["page", "delete"], ["1"])
    try run(["delete"], ["1"])

    let offered = try CompletionCommandTests.commandPaths().filter { $0.options.contains("--json") }.map(\.path)
    #expect(Set(offered) == checked, "commands with --json that this test does not run, or runs without --json")
    #expect(Set(table.keys) == checked, "docs/json-output.md's tasker rows differ from the commands")
  }

  /// A field with no value is there, as null: never left out.
  @Test func aFieldWithNoValueIsAnExplicitNull() throws {
    let device = try TestDevice()
    let added = try device.tasker(["add", "X", "--json"])
    #expect(added.status == 0, "\(added.stderr)")
    for field in ["due", "completed", "energy", "estimate_minutes"] {
      #expect(added.stdoutText.contains("\"\(field)\":null"), "\(field) left out: \(added.stdoutText)")
    }
    let object = try #require(try added.json() as? [String: Any])
    #expect(object["due"] is NSNull && object["attachments"] as? [Any] != nil)
    let gate = try device.tasker(["gate", "show", "--json"]).stdoutText
    #expect(gate.contains(#""quiet_hours":null"#), "\(gate)")
  }

  /// The rules the test applies refuse what they should: the shapes
  /// tasker printed before issue 21.
  @Test func theCheckerRefusesEachBreak() {
    #expect(Self.breaks(["estimateMinutes": 5]) != [])
    #expect(Self.breaks(["taskID": "1"]) != [])
    #expect(Self.breaks(["id": 42]) != [])
    #expect(Self.breaks(["tasks": [["created": 1_796_149_173]]]) != [])
    #expect(Self.breaks(["due": "2026-12-03T00:00:00Z"]) != [])
    #expect(Self.breaks(["id": "42", "task_id": NSNull(), "at": "2026-12-01T14:04:05Z", "due": "2026-12-03"]) == [])
    #expect(Self.unsortedObjects(Array(#"{"b":1,"a":{"y":[{"d":"}","c":2}]}}"#.utf8)) == [["d", "c"], ["b", "a"]])
    #expect(Self.unsortedObjects(Array(#"{"a":"\"b","c":["z","y"]}"#.utf8)) == [])
  }
}
