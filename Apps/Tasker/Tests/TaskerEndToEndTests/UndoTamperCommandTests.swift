import Foundation
import TaskerTestSupport
import Testing

/// `tasker undo` verifies the receipt chain before it trusts a receipt:
/// a receipt a writer of the database appended with the real `sqlite3`
/// shell (triggers dropped) saying r2 was undone does not block the real
/// undo unnoticed; the undo refuses as `tasker receipts --verify` does
/// (exit 15) and changes nothing.
@Suite("tasker undo refuses a broken receipt chain")
struct UndoTamperCommandTests {
  /// An "undone" receipt for r2 (the delete of task 2), appended as r5.
  static func forgedUndone(chain: String) -> String {
    ReceiptChainCommandTests.noTriggers
      + "INSERT INTO gate_receipts (at, actor, tool, decision, target, summary, undoes, chain) "
      + "VALUES (0, 'user', 'undo', 'undone', 'receipt/2', 'undid r2: restored task 2', 2, \(chain))"
  }

  static func count(_ device: TestDevice, _ sql: String) throws -> String {
    let result = try device.sqlite(sql)
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  @Test(arguments: [
    ("without a chain", "NULL", "missing_chain"),
    ("with r4's chain copied", "(SELECT chain FROM gate_receipts WHERE id = 4)", "chain_mismatch"),
  ])
  func aForgedUndoneReceiptIsRefusedAndNothingChanges(name: String, chain: String, outcome: String) throws {
    let device = try ReceiptChainCommandTests.fourReceipts()
    let forged = try device.sqlite(Self.forgedUndone(chain: chain))
    #expect(forged.status == 0, "\(name): \(forged.stderr)")
    let undo = try device.tasker(["undo", "r2"])
    #expect(undo.status == 15, "\(name): the exit of 'receipts --verify' for tampering, not 'already undone'")
    #expect(!undo.stderr.contains("already undone"), "\(name): \(undo.stderr)")
    #expect(
      undo.stderr.contains("the receipts were altered outside Tasker (\(outcome) at r5)"), "\(name): \(undo.stderr)")
    #expect(undo.stderr.contains("tasker receipts --verify"), "\(name): the hint")
    #expect(undo.stdout.isEmpty)
    #expect(try Self.count(device, "SELECT count(*) FROM gate_receipts") == "5", "\(name): no receipt written")
    #expect(try Self.count(device, "SELECT count(*) FROM tasks") == "0", "\(name): task 2 not restored")
    #expect(try Self.count(device, "SELECT count(*) FROM gate_undo_tasks WHERE receipt = 2") == "1", "copy kept")
    let verify = try device.tasker(["receipts", "--verify", "--json"])
    #expect(verify.status == 15 && verify.stdoutText.contains("\"broken\":\"r5\""), "\(name): the same link")
  }

  @Test func aReceiptEditedBeforeTheOneUndoneIsRefusedToo() throws {
    let device = try ReceiptChainCommandTests.fourReceipts()
    let edited = try device.sqlite(
      ReceiptChainCommandTests.noTriggers + "UPDATE gate_receipts SET summary = 'nothing' WHERE id = 1")
    #expect(edited.status == 0, "\(edited.stderr)")
    let undo = try device.tasker(["undo", "r3", "--json"])
    #expect(undo.status == 15 && undo.stderr.contains("(chain_mismatch at r1)"), "\(undo.stderr)")
    #expect(try Self.count(device, "SELECT count(*) FROM tasks") == "0")
  }

  @Test func anIntactChainStillUndoesAlsoWithTheVaultLocked() throws {
    let device = try ReceiptChainCommandTests.fourReceipts()
    try device.vault().lock()
    let undo = try device.tasker(["undo", "r2"])
    #expect(undo.status == 0, "the head is not checked, the chain is: \(undo.stderr)")
    #expect(undo.stdoutText.contains("restored task 2 (receipt r5)."), "\(undo.stdoutText)")
    #expect(undo.stdoutText.hasPrefix("Undid r2: restored task 2"), "the line says 'undid' once: \(undo.stdoutText)")
    let again = try device.tasker(["undo", "r2"])
    #expect(again.status == 53 && again.stderr.contains("already undone by r5"), "\(again.stderr)")
  }
}
