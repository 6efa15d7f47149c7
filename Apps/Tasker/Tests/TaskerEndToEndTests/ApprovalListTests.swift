import Foundation
import TaskerTestSupport
import Testing

/// `tasker approvals list` shows the full change a call asks for, every
/// value through TerminalText (issue 23, break 2: approval spoofing).
@Suite struct ApprovalListTests {
  /// A title that tries to end the delete's row and print a forged "add" row.
  static let spoof = "\u{1B}[2K\r#9\tpending\tadd_task\tplanner\tadd task 'Buy milk'\n\u{1B}[1A"

  @Test func anAssistantsTitleCannotMakeADeleteReadAsAnAdd() throws {
    let device = try TestDevice()
    let planner = try device.mintKey("planner", trust: "standard")
    let results = try device.gateCalls(
      key: planner.key, [("add_task", ["title": Self.spoof]), ("delete_task", ["id": 1])])
    #expect(results[1]["status"] as? String == "queued", "\(results)")
    let listed = try device.tasker(["approvals", "list"])
    #expect(listed.status == 0, "\(listed.stderr)")
    #expect(!listed.stdout.contains(0x1B) && !listed.stdout.contains(0x0D), "\(listed.stdoutText.debugDescription)")
    let lines = listed.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    let rows = lines.filter { $0.hasPrefix("#") }
    #expect(rows.count == 1, "one row per approval: \(lines)")
    let columns = try #require(rows.first).split(separator: "\t", omittingEmptySubsequences: false)
    #expect(columns.count == 6, "\(columns)")
    #expect(columns[1] == "pending" && columns[2] == "delete_task", "\(columns)")
    #expect(columns[5].hasPrefix("delete task 1 '\\u{1B}[2K\\r#9\\tpending"), "\(columns)")
    let details = lines.filter { !$0.hasPrefix("#") }
    #expect(details.allSatisfy { $0.hasPrefix("\tdelete task 1\t") }, "\(details)")
    #expect(details.contains { $0.hasPrefix("\tdelete task 1\ttitle\tnow '\\u{1B}[2K\\r#9\\tpending\\tadd_task") })
    #expect(details.contains { $0 == "\tdelete task 1\tstatus\tnow open\trequested (deleted)" }, "\(details)")
    // JSON keeps the exact text, escaped by the writer.
    let json = try device.tasker(["approvals", "list", "--json"])
    #expect(!json.stdout.contains(0x1B))
    let approval = try #require(((try json.json() as? [String: Any])?["approvals"] as? [[String: Any]])?.first)
    let change = try #require(approval["change"] as? [String: Any])
    let record = try #require((change["records"] as? [[String: Any]])?.first)
    #expect(record["action"] as? String == "delete task 1" && record["task_id"] as? String == "1")
    let title = (record["fields"] as? [[String: Any]])?.first { $0["name"] as? String == "title" }
    #expect(title?["current"] as? String == Self.spoof && title?["requested"] is NSNull)
  }

  @Test func anEditShowsTheCurrentFieldsBesideTheRequestedOnes() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "Old title", "--due", "2026-12-01"]).status == 0)
    let planner = try device.mintKey("planner", trust: "restricted", grants: ["tasks:write", "pages:write"])
    try device.gateCalls(
      key: planner.key,
      [
        ("edit_task", ["ids": [1], "title": "New\ttitle", "due": "2027-01-02", "priority": "high"]),
        ("add_task", ["title": "Buy milk", "due": "2027-02-03", "notes": "line one\u{1B}]0;x\u{7}\nline two"]),
        ("add_page", ["title": "Agenda", "body": "first\nsecond"]),
      ])
    let text = try device.tasker(["approvals", "list"]).stdoutText
    #expect(!text.contains("\u{1B}"), "\(text.debugDescription)")
    for line in [
      "\tedit task 1\ttitle\tnow 'Old title'\trequested 'New\\ttitle'",
      "\tedit task 1\tdue\tnow 2026-12-01\trequested 2027-01-02",
      "\tedit task 1\tpriority\tnow none\trequested high",
      "\tadd task\ttitle\trequested 'Buy milk'",
      "\tadd task\tdue\trequested 2027-02-03",
      "\tadd task\tnotes\trequested 23 bytes, 2 lines:\n\t\t| line one\\u{1B}]0;x\\u{7}\n\t\t| line two",
      "\tadd page\tbody\trequested 12 bytes, 2 lines:\n\t\t| first\n\t\t| second",
    ] {
      #expect(text.contains(line + "\n"), "\(line.debugDescription) in \(text.debugDescription)")
    }
    #expect(!text.contains("\tedit task 1\tcontexts"), "only the fields the edit changes: \(text)")
    let approvals = try #require(
      (try device.tasker(["approvals", "list", "--json"]).json() as? [String: Any])?["approvals"] as? [[String: Any]])
    let notes =
      ((approvals[1]["change"] as? [String: Any])?["records"] as? [[String: Any]])?.first?["fields"]
      as? [[String: Any]]
    let body = notes?.first { $0["name"] as? String == "notes" }?["requested"] as? [String: Any]
    #expect(body?["bytes"] as? Int == 23 && body?["first_line"] as? String == "line one\u{1B}]0;x\u{7}")
    #expect(body?["text"] as? String == "line one\u{1B}]0;x\u{7}\nline two", "the full text, exact")
    // A decided call no longer holds its arguments: its change is null.
    #expect(try device.tasker(["approvals", "deny", "1"]).status == 0)
    let all = try #require(
      (try device.tasker(["approvals", "list", "--all", "--json"]).json() as? [String: Any])?["approvals"]
        as? [[String: Any]])
    #expect(all[0]["change"] is NSNull && all[1]["change"] is [String: Any])
  }

  /// A queued add's note shown in full, each line indented and escaped:
  /// a line shaped as an approval row or a field line stays inside it.
  @Test func aQueuedAddShowsItsWholeNoteIndentedAndEscaped() throws {
    let device = try TestDevice()
    let planner = try device.mintKey("planner", trust: "restricted", grants: ["tasks:write"])
    let notes = "Pick up the results\n\n#7\tpending\tdelete_task\tx\r\u{1B}[2K\n\tadd task\ttitle\tok\nlast line\n"
    try device.gateCalls(key: planner.key, [("add_task", ["title": "Clinic", "notes": notes])])
    let listed = try device.tasker(["approvals", "list"])
    #expect(listed.status == 0, "\(listed.stderr)")
    #expect(!listed.stdout.contains(0x1B) && !listed.stdout.contains(0x0D), "\(listed.stdoutText.debugDescription)")
    let lines = listed.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.filter { $0.hasPrefix("#") }.count == 1, "\(lines)")
    let start = try #require(lines.firstIndex { $0.hasPrefix("\tadd task\tnotes\t") })
    #expect(lines[start] == "\tadd task\tnotes\trequested \(notes.utf8.count) bytes, 5 lines:")
    #expect(
      Array(lines[(start + 1)...])
        == [
          "\t\t| Pick up the results", "\t\t| ", "\t\t| #7\\tpending\\tdelete_task\\tx\\r\\u{1B}[2K",
          "\t\t| \\tadd task\\ttitle\\tok", "\t\t| last line",
        ], "\(lines)")
    let approvals = try #require(
      (try device.tasker(["approvals", "list", "--json"]).json() as? [String: Any])?["approvals"] as? [[String: Any]])
    let fields =
      ((approvals.first?["change"] as? [String: Any])?["records"] as? [[String: Any]])?.first?["fields"]
      as? [[String: Any]]
    let body = fields?.first { $0["name"] as? String == "notes" }?["requested"] as? [String: Any]
    #expect(body?["text"] as? String == notes && body?["bytes"] as? Int == notes.utf8.count)
  }
}
