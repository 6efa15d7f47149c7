import Foundation
import TaskKeyTestSupport
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
    try JSONConventionCheck.documented("tasker", repository: repository)
  }

  /// What in `value` breaks the page's rules (TaskKeyTestSupport's shared checker).
  static func breaks(_ value: Any, at path: String = "$") -> [String] { JSONConventionCheck.breaks(value, at: path) }

  /// The key lists of every object whose keys are not sorted.
  static func unsortedObjects(_ bytes: [UInt8]) -> [[String]] { JSONConventionCheck.unsortedObjects(bytes) }

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
    // A planning provider: the stand-in server on 127.0.0.1 answers plans, then text.
    let server = try StandInProvider(mode: "plan-reverse")
    let provider = try run(["provider", "add"], ["local", "--url", server.url])
    #expect(provider["confirmed_at"] is NSNull && provider["scope"] as? String == "loopback")
    try run(["provider", "list"])
    let plan = try run(["plan"], ["--apply"])
    #expect((plan["plan"] as? [[String: Any]])?.first?["id"] as? String == "1")
    try server.set(mode: "ask-text")
    try run(["ask"], ["What first?"])
    try server.set(mode: "ok")
    try run(["provider", "test"], ["local"])
    let log = try #require(try run(["provider", "log"])["calls"] as? [[String: Any]])
    #expect(log.map { $0["kind"] as? String } == ["test", "ask", "plan"])
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
    try run(["gate", "read-budget"], ["500"])
    try run(["gate", "quiet-hours"], ["22:00-07:00"])
    let keys = try #require(try run(["gate", "show"])["keys"] as? [[String: Any]])
    #expect(keys.count == 1 && keys[0]["key_id"] as? String == minted["id"] as? String, "\(keys)")
    // Sync through a folder, with a second device writing the same note at once: a conflict to resolve.
    let folder = device.root.path("storage")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    let setUp = try run(["sync", "setup"], [folder, "--name", "first"])
    #expect((setUp["device"] as? String)?.count == 32 && (setUp["target"] as? String)?.hasSuffix("/storage") == true)
    try run(["sync", "now"])
    let other = try TestDevice()
    let bundle = device.root.path("keys.tksync")
    #expect(
      try device.taskkey(["sync", "export", "--out", bundle, "--passphrase-file", device.passphraseFile]).status == 0)
    #expect(try other.taskkey(["sync", "import", bundle, "--passphrase-file", device.passphraseFile]).status == 0)
    #expect(try other.tasker(["sync", "setup", folder, "--name", "second"]).status == 0)
    #expect(try other.tasker(["sync", "now"]).status == 0)
    #expect(try other.tasker(["page", "edit", "1", "--body", "-"], input: "from the second").status == 0)
    #expect(try other.tasker(["sync", "now"]).status == 0)
    try run(["page", "edit"], ["1", "--body", "-"], input: "from the first")
    let synced = try run(["sync", "now"])
    // The second device's first object (written at its first sync, with its box key) and its edit.
    #expect((synced["applied"] as? [[String: Any]])?.first?["objects"] as? Int == 2, "\(synced)")
    try run(["sync", "status"])
    let compacted = try #require(try run(["sync", "compact"])["compaction"] as? [String: Any])
    #expect(compacted["folded"] as? Int == 1 && compacted["floor"] as? Int ?? 0 > 0, "\(compacted)")
    #expect((try run(["sync", "devices"])["devices"] as? [[String: Any]])?.first?["name"] as? String == "second")
    let conflicts = try #require(try run(["conflicts"])["conflicts"] as? [[String: Any]])
    #expect(conflicts.count == 1 && conflicts[0]["id"] as? String == "1", "\(conflicts)")
    #expect(try run(["resolve"], ["page", "1", "--keep", "2"])["id"] as? String == "1")
    let secondStatus = try other.tasker(["sync", "status", "--json"]).json() as? [String: Any]
    let secondID = try #require(secondStatus?["device"] as? String)
    let removal = try run(["sync", "remove-device"], [secondID])
    #expect(removal["removed"] as? String == secondID && removal["epoch"] as? Int == 2, "\(removal)")
    try run(["sync", "off"])
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
