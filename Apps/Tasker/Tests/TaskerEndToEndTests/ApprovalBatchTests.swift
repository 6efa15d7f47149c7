import Foundation
import TaskerTestSupport
import Testing

extension TestDevice {
  /// `taskkey mint` with `grants`; returns the key and its public id.
  func mintKey(_ name: String, trust: String, grants: [String] = ["tasks:write"]) throws -> (key: String, id: String) {
    let minted = try taskkey(
      ["mint", "--name", name, "--trust", trust, "--json"] + grants.flatMap { ["--grant", $0] })
    guard minted.status == 0, let object = try minted.json() as? [String: Any], let key = object["key"] as? String,
      let id = object["id"] as? String
    else { throw SetupFailure("mint: \(minted.stderr)") }
    return (key, id)
  }

  /// Runs `calls` through one stdio gate session under `key`; returns each structured result.
  @discardableResult
  func gateCalls(key: String, _ calls: [(String, [String: Any])]) throws -> [[String: Any]] {
    var environment = self.environment
    environment["TASKER_ASSISTANT_KEY"] = key
    let session = try LineProcess(.tasker, ["mcp"], environment: environment)
    try session.initializeMCP()
    let results = try calls.map { try session.callTool($0.0, $0.1) }
    let end = session.finish()
    guard end.status == 0 else { throw SetupFailure("mcp: \(end.stderr)") }
    return results
  }

  /// Queues `count` add_task calls of a restricted key (every action waits).
  func queueAdds(key: String, _ titles: [String]) throws {
    let results = try gateCalls(key: key, titles.map { ("add_task", ["title": $0]) })
    guard results.allSatisfy({ $0["status"] as? String == "queued" }) else { throw SetupFailure("\(results)") }
  }

  /// The statuses of every approval, by id.
  func approvalStatuses() throws -> [String: String] {
    let rows = try tasker(["approvals", "list", "--all", "--json"]).json() as? [String: Any]
    let list = rows?["approvals"] as? [[String: Any]] ?? []
    return Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as! String, $0["status"] as! String) })
  }
}

/// `tasker approvals approve|deny ID... | --all-from KEYID` (issue 23, the user's side).
@Suite struct ApprovalBatchTests {
  @Test func severalIdsAreDecidedInTurnAndOneIdKeepsItsFields() throws {
    let device = try TestDevice()
    let planner = try device.mintKey("planner", trust: "restricted")
    try device.queueAdds(key: planner.key, ["one", "two", "three"])
    let two = try device.tasker(["approvals", "approve", "1", "2", "--json"])
    #expect(two.status == 0, "\(two.stderr)")
    let object = try #require(try two.json() as? [String: Any])
    #expect(object["approval"] is NSNull && object["receipt"] is NSNull && object["summary"] is NSNull)
    let decided = try #require(object["decided"] as? [[String: Any]])
    #expect(decided.map { $0["approval"] as? String } == ["1", "2"])
    #expect(decided.allSatisfy { ($0["receipt"] as? String)?.hasPrefix("r") == true })
    let one = try #require(try device.tasker(["approvals", "deny", "3", "--json"]).json() as? [String: Any])
    #expect(one["approval"] as? String == "3" && (one["receipt"] as? String)?.hasPrefix("r") == true)
    #expect((one["decided"] as? [[String: Any]])?.count == 1)
    #expect(try device.approvalStatuses() == ["1": "approved", "2": "approved", "3": "denied"])
    let titles = try device.tasker(["list"]).stdoutText
    #expect(titles.contains("one") && titles.contains("two") && !titles.contains("three"))
  }

  @Test func theFirstFailureStopsWithItsCodeAndNamesWhatWasDecided() throws {
    let device = try TestDevice()
    let planner = try device.mintKey("planner", trust: "restricted")
    try device.queueAdds(key: planner.key, ["one", "two", "three", "four"])
    #expect(try device.tasker(["approvals", "deny", "2"]).status == 0)
    let stopped = try device.tasker(["approvals", "approve", "1", "2", "3"])
    #expect(stopped.status == 53, "approval not pending: \(stopped.stderr)")
    #expect(stopped.stdout.isEmpty)
    #expect(stopped.stderr.contains("stopped at #2"), "\(stopped.stderr)")
    #expect(stopped.stderr.contains("already decided: #1;") && stopped.stderr.contains("not tried: #3"))
    #expect(try device.approvalStatuses() == ["1": "approved", "2": "denied", "3": "pending", "4": "pending"])
    let missing = try device.tasker(["approvals", "deny", "3", "9"])
    #expect(missing.status == 19, "\(missing.stderr)")
    #expect(missing.stderr.contains("stopped at #9") && missing.stderr.contains("already decided: #3"))
    // A single id fails as it always did.
    let single = try device.tasker(["approvals", "approve", "2"])
    #expect(single.status == 53 && !single.stderr.contains("stopped at"))
  }

  @Test func idsAndAllFromAreCheckedBeforeAnythingIsDecided() throws {
    let device = try TestDevice()
    let planner = try device.mintKey("planner", trust: "restricted")
    try device.queueAdds(key: planner.key, ["one"])
    for arguments in [
      ["approve"], ["approve", "1", "--all-from", "planner"], ["deny", "1", "1"], ["deny", "1", "x"],
      ["approve", "--all-from", "tkid_01234"],
    ] {
      let result = try device.tasker(["approvals"] + arguments)
      #expect(result.status == 64, "\(arguments): \(result.stderr)")
    }
    let unknown = try device.tasker(["approvals", "approve", "--all-from", "nobody"])
    #expect(unknown.status == 22, "\(unknown.stderr)")
    #expect(unknown.stderr.contains("no assistant key is named 'nobody'"), "\(unknown.stderr)")
    #expect(try device.approvalStatuses() == ["1": "pending"])
  }

  @Test func allFromTakesAKeysIdOrItsName() throws {
    let device = try TestDevice()
    let planner = try device.mintKey("planner", trust: "restricted")
    let helper = try device.mintKey("helper", trust: "restricted")
    try device.queueAdds(key: planner.key, ["p1"])
    try device.queueAdds(key: helper.key, ["h1"])
    try device.queueAdds(key: planner.key, ["p2"])
    let denied = try #require(
      try device.tasker(["approvals", "deny", "--all-from", "planner", "--json"]).json() as? [String: Any])
    #expect((denied["decided"] as? [[String: Any]])?.map { $0["approval"] as? String } == ["1", "3"])
    let approved = try device.tasker(["approvals", "approve", "--all-from", helper.id])
    #expect(approved.status == 0, "\(approved.stderr)")
    #expect(approved.stdoutText.hasPrefix("Approved #2 and ran it: added task 1 'h1'"), "\(approved.stdoutText)")
    #expect(try device.approvalStatuses() == ["1": "denied", "2": "approved", "3": "denied"])
    let none = try device.tasker(["approvals", "deny", "--all-from", "planner", "--json"])
    #expect(none.status == 0)
    #expect((try none.json() as? [String: Any])?["decided"] as? [Any] != nil)
  }
}

/// `--key` takes a key's name; `gate show --json` has a row per key.
@Suite struct GateKeyRowsTests {
  @Test func budgetKeyTakesANameAndFollowsTheCurrentKey() throws {
    let device = try TestDevice()
    let planner = try device.mintKey("planner", trust: "standard")
    let set = try #require(
      try device.tasker(["gate", "budget", "7", "--key", "planner", "--json"]).json() as? [String: Any])
    #expect(set["key_id"] as? String == planner.id)
    let rotated = try #require(
      try device.taskkey(["rotate", "--assistant", "planner", "--json"]).json() as? [String: Any])
    let newID = try #require(rotated["id"] as? String)
    let again = try #require(
      try device.tasker(["gate", "budget", "9", "--key", "planner", "--json"]).json() as? [String: Any])
    #expect(again["key_id"] as? String == newID && newID != planner.id)
    let unknown = try device.tasker(["gate", "budget", "3", "--key", "nobody"])
    #expect(unknown.status == 22, "\(unknown.stderr)")
    #expect(unknown.stderr.contains("'taskkey list'"), "\(unknown.stderr)")
    let malformed = try device.tasker(["gate", "budget", "3", "--key", "tkid_XYZ"])
    #expect(malformed.status == 64, "\(malformed.stderr)")
  }

  @Test func gateShowListsEachKeysBudgetUseAndQueue() throws {
    let device = try TestDevice()
    let planner = try device.mintKey("planner", trust: "restricted")
    let helper = try device.mintKey("helper", trust: "standard")
    #expect(try device.tasker(["gate", "budget", "7", "--key", "planner"]).status == 0)
    let broken = try device.mintKey("broken", trust: "standard")
    let damaged = try device.sqlite("INSERT INTO settings (name, value) VALUES ('gate.budget.\(broken.id)', 'x')")
    #expect(damaged.status == 0, "\(damaged.stderr)")
    try device.queueAdds(key: planner.key, ["one", "two", "three"])
    #expect(try device.tasker(["approvals", "approve", "1"]).status == 0)
    try device.gateCalls(key: helper.key, [("add_task", ["title": "h"]), ("add_task", ["title": "i"])])
    let shown = try #require(try device.tasker(["gate", "show", "--json"]).json() as? [String: Any])
    let rows = try #require(shown["keys"] as? [[String: Any]])
    #expect(Set(rows.compactMap { $0["key_id"] as? String }) == [planner.id, helper.id, broken.id] && rows.count == 3)
    func row(_ id: String) throws -> [String: Any] { try #require(rows.first { $0["key_id"] as? String == id }) }
    #expect(try row(broken.id)["budget"] is NSNull, "a damaged setting is no number")
    let first = try row(planner.id)
    #expect(first["name"] as? String == "planner" && first["status"] as? String == "active")
    #expect(first["budget"] as? Int == 7 && first["actions_today"] as? Int == 1)
    #expect(first["pending_approvals"] as? Int == 2)
    let bytes = try device.sqlite("SELECT sum(length(CAST(arguments AS BLOB))) FROM gate_approvals").stdoutText
    #expect(first["pending_bytes"] as? Int == Int(bytes.trimmingCharacters(in: .whitespacesAndNewlines)))
    #expect((first["pending_bytes"] as? Int ?? 0) > 0)
    let second = try row(helper.id)
    #expect(second["budget"] as? Int == 100 && second["actions_today"] as? Int == 2)
    #expect(second["pending_approvals"] as? Int == 0 && second["pending_bytes"] as? Int == 0)
    let text = try device.tasker(["gate", "show"]).stdoutText
    #expect(
      text.contains(
        "key\t\(planner.id)\tplanner\tactive\tbudget 7\ttoday 1\tread-budget 2000\treads today 0\tpending 2 ("),
      "\(text)")
    #expect(first["read_budget"] as? Int == 2000 && first["reads_today"] as? Int == 0)
    #expect(shown["read_budget_default"] as? Int == 2000)
    // Locked, the registry cannot be read: the rows are unknown, not empty.
    #expect(try device.taskkey(["lock"]).status == 0)
    let locked = try device.tasker(["gate", "show", "--json"])
    #expect(locked.status == 0, "\(locked.stderr)")
    let hidden = try #require(try locked.json() as? [String: Any])
    #expect(hidden["keys"] is NSNull && hidden["budget_default"] as? Int == 100, "\(hidden)")
    #expect(try device.tasker(["gate", "show"]).stdoutText.contains("keys\t(the vault is locked"))
    #expect(try device.tasker(["gate", "budget", "3", "--key", "planner"]).status == 14, "a name needs the registry")
    #expect(try device.tasker(["gate", "budget", "3", "--key", planner.id]).status == 0, "an id does not")
  }
}
