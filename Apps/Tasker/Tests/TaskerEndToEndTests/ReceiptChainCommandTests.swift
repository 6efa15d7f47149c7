import Foundation
import TaskerTestSupport
import Testing

/// `tasker receipts --verify` on a real home, the database changed through
/// the real `sqlite3` shell (issue 23 break 7).
@Suite("Issue 23 break 7: tampered receipts are found")
struct ReceiptChainCommandTests {
  /// A device with four receipts r1…r4 (the user's deletes), head at r4.
  static func fourReceipts() throws -> TestDevice {
    let device = try TestDevice()
    for title in ["a", "b", "c", "d"] { #expect(try device.tasker(["add", title]).status == 0) }
    for id in ["1", "2", "3", "4"] {
      let deleted = try device.tasker(["delete", id])
      #expect(deleted.status == 0, "\(deleted.stderr)")
    }
    return device
  }

  static func verification(_ device: TestDevice) throws -> (status: Int32, report: [String: Any]) {
    let result = try device.tasker(["receipts", "--verify", "--json"])
    let object = try #require(try result.json() as? [String: Any], "\(result.stderr)")
    return (result.status, try #require(object["verification"] as? [String: Any]))
  }

  static let noTriggers =
    "DROP TRIGGER gate_receipts_append_only_update; DROP TRIGGER gate_receipts_append_only_delete; "
    + "DROP TRIGGER gate_receipts_append_only_insert; "

  @Test func anIntactChainAndItsHead() throws {
    let device = try Self.fourReceipts()
    let (status, report) = try Self.verification(device)
    #expect(status == 0)
    #expect(report["outcome"] as? String == "intact" && report["intact"] as? Bool == true)
    #expect(report["count"] as? Int == 4 && report["last"] as? String == "r4" && report["head"] as? String == "r4")
    #expect(report["unanchored"] as? Int == 0)
    let text = try device.tasker(["receipts", "--verify"])
    #expect(text.status == 0 && text.stdoutText.hasPrefix("Receipts intact: 4 receipts, chained to r4; head at r4"))
    let head = device.home.directory + "/receipts.head"
    let mode = try FileManager.default.attributesOfItem(atPath: head)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    let line = try String(contentsOfFile: head, encoding: .utf8)
    #expect(line.hasPrefix("tasker-receipt-head 1 4 ") && line.hasSuffix("\n") && line.count == 24 + 64 + 1 + 64 + 1)
  }

  @Test(arguments: [
    ("edited", "UPDATE gate_receipts SET summary = 'nothing happened' WHERE id = 2", "chain_mismatch", "r2"),
    ("deleted in the middle", "DELETE FROM gate_receipts WHERE id = 2", "chain_mismatch", "r3"),
    (
      "reordered",
      "UPDATE gate_receipts SET id = 100 WHERE id = 2; UPDATE gate_receipts SET id = 2 WHERE id = 3; "
        + "UPDATE gate_receipts SET id = 3 WHERE id = 100", "chain_mismatch", "r2"
    ),
    (
      "inserted in the middle",
      "DELETE FROM gate_receipts WHERE id = 2; INSERT INTO gate_receipts (id, at, actor, tool, decision, target, "
        + "summary, chain) SELECT 2, at, 'trusted', 'complete_task', 'allow', 'task/2', 'forged', chain "
        + "FROM gate_receipts WHERE id = 1", "chain_mismatch", "r2"
    ),
    (
      "appended without a chain",
      "INSERT INTO gate_receipts (at, actor, tool, decision, target, summary, undo) "
        + "VALUES (0, 'trusted', 'add_task', 'allow', 'task/9', 'forged', 'delete-task:9')", "missing_chain", "r5"
    ),
    ("tail truncated back past the head", "DELETE FROM gate_receipts WHERE id >= 3", "head_not_on_chain", "r4"),
  ])
  func aWriterOfTheDatabaseIsCaught(name: String, sql: String, outcome: String, broken: String) throws {
    let device = try Self.fourReceipts()
    let changed = try device.sqlite(Self.noTriggers + sql)
    #expect(changed.status == 0, "\(name): \(changed.stderr)")
    let (status, report) = try Self.verification(device)
    #expect(status == 15, "\(name)")
    #expect(report["outcome"] as? String == outcome, "\(name): \(report)")
    #expect(report["broken"] as? String == broken, "\(name): \(report)")
    let text = try device.tasker(["receipts", "--verify"])
    #expect(text.status == 15 && text.stdoutText.hasPrefix("Receipts TAMPERED: \(outcome)\n\(broken): "), "\(name)")
  }

  @Test func aHeadWrittenWithoutTheKeyIsForged() throws {
    let device = try Self.fourReceipts()
    let path = device.home.directory + "/receipts.head"
    let line = try String(contentsOfFile: path, encoding: .utf8)
    try line.replacingOccurrences(of: "head 1 4 ", with: "head 1 2 ").write(
      toFile: path, atomically: false, encoding: .utf8)
    let (status, report) = try Self.verification(device)
    #expect(status == 15 && report["outcome"] as? String == "head_forged", "\(report)")
    try "not a head\n".write(toFile: path, atomically: false, encoding: .utf8)
    #expect(try Self.verification(device).report["outcome"] as? String == "head_malformed")
  }

  @Test func aLockedVaultLeavesTheHeadAndTheNextWriteMovesIt() throws {
    let device = try Self.fourReceipts()
    #expect(try device.tasker(["add", "e"]).status == 0)
    try device.vault().lock()
    let deleted = try device.tasker(["delete", "5"])
    #expect(deleted.status == 0, "the write does not fail for the head: \(deleted.stderr)")
    let line = try String(contentsOfFile: device.home.directory + "/receipts.head", encoding: .utf8)
    #expect(line.hasPrefix("tasker-receipt-head 1 4 "), "left as it was")
    let locked = try Self.verification(device)
    #expect(locked.status == 14 && locked.report["outcome"] as? String == "head_unchecked")
    try device.vault().unlock(passphrase: try device.secret())
    let unlocked = try Self.verification(device)
    #expect(unlocked.status == 0 && unlocked.report["head"] as? String == "r4")
    #expect(unlocked.report["unanchored"] as? Int == 1)
    #expect(try device.tasker(["add", "f"]).status == 0)
    #expect(try device.tasker(["delete", "6"]).status == 0)
    let moved = try Self.verification(device)
    #expect(moved.status == 0 && moved.report["head"] as? String == "r6" && moved.report["unanchored"] as? Int == 0)
  }
}
