import Foundation
import TaskerTestSupport
import Testing

@Suite("Issue 22 break 15: tasker receipts never prints a row that breaks receipt.md")
struct GateReceiptCommandTests {
  static let row =
    "INSERT INTO gate_receipts (at, actor, key_id, assistant, tool, decision, target, summary, undo, undoes, approval) "

  @Test func theRowsTheIssueFoundAreRefusedByTheTable() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "t"]).status == 0)
    let rows = [
      "VALUES (1796000000, 'trusted', NULL, NULL, 'add_task', 'maybe', 'task/1', 's', NULL, NULL, NULL)",
      "VALUES (1796000000, 'assistant', 'tkid_0123456789abcdef', 'a', 'add_task', 'refuse:budget-exhausted', '', 's', "
        + "'delete-task:1', NULL, NULL)",
      "VALUES (1796000000, 'assistant', 'tkid_0123456789ABCDEF', 'a', 'add_task', 'allow', 'task/1', 's', "
        + "'delete-task:1', NULL, NULL)",
      "VALUES (-1, 'trusted', NULL, NULL, 'add_task', 'allow', 'task/1', 's', 'delete-task:1', NULL, NULL)",
    ]
    for values in rows {
      let inserted = try device.sqlite(Self.row + values)
      #expect(inserted.status != 0, "\(values)")
    }
    #expect(
      try device.sqlite(
        Self.row + "VALUES (1796000000, 'trusted', NULL, NULL, 'add_task', 'allow', 'task/1', "
          + "'s', 'delete-task:1', NULL, NULL)"
      ).status == 0)
    let undo = "VALUES (1796000000, 'user', NULL, NULL, 'undo', 'undone', 'receipt/5', 's', NULL, 5, NULL)"
    #expect(try device.sqlite(Self.row + undo).status != 0, "undoes pointing forward")
    let replaced = try device.sqlite(
      "INSERT OR REPLACE INTO gate_receipts (id, at, actor, tool, decision, target, summary, undo) "
        + "VALUES (1, 0, 'trusted', 'add_task', 'allow', 'task/1', 'rewritten', 'delete-task:1')")
    #expect(replaced.status != 0)
    #expect(try device.tasker(["receipts"]).stdoutText.contains("\ts"))
  }

  @Test func aRowWrittenWithTheChecksOffFailsTheCommandAndNamesIt() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "t"]).status == 0)
    let written = try device.sqlite(
      "PRAGMA ignore_check_constraints = ON; " + Self.row
        + "VALUES (1796000000, 'trusted', NULL, NULL, 'add_task', 'maybe', 'task/1', 'forged', NULL, NULL, NULL)")
    #expect(written.status == 0, "\(written.stderr)")
    for arguments in [["receipts"], ["receipts", "--json"], ["undo", "r1"]] {
      let result = try device.tasker(arguments)
      #expect(result.status == 65, "\(arguments): \(result.stderr)")
      #expect(result.stdout.isEmpty)
      #expect(result.stderr.hasPrefix("tasker: error: receipt r1 in the database is not valid: rule 5"))
    }
  }
}
