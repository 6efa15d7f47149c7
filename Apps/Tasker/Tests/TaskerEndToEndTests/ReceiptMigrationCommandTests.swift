import Foundation
import TaskerTestSupport
import Testing

/// Schema 8 on a real database of schema 7: the receipts a Tasker before
/// schema 8 chained still verify through `tasker receipts --verify`, and
/// their kept copies still undo.
@Suite("Issue 23: a real schema 7 database migrates with its chain intact")
struct ReceiptMigrationCommandTests {
  static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/tasker-v7.sql")

  @Test func aVersionSevenHomeVerifiesAfterTheMigration() throws {
    let device = try TestDevice()
    let script = try String(contentsOf: Self.fixture, encoding: .utf8)
    try FileManager.default.createDirectory(
      atPath: device.home.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let loaded = try Binary(path: Binary.which("sqlite3")).run(
      ["-batch", device.home.databasePath], stdin: Array(script.utf8))
    #expect(loaded.status == 0, "\(loaded.stderr)")
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: device.home.databasePath)
    let chains = try device.sqlite("SELECT group_concat(chain, ' ') FROM gate_receipts ORDER BY id").stdoutText
    let verified = try device.tasker(["receipts", "--verify", "--json"])
    #expect(verified.status == 0, "\(verified.stderr)")
    let report = try #require(
      (try verified.json() as? [String: Any])?["verification"] as? [String: Any], "\(verified.stdoutText)")
    #expect(report["outcome"] as? String == "intact" && report["count"] as? Int == 3, "\(report)")
    #expect(try device.sqlite("PRAGMA user_version").stdoutText == "11\n")
    #expect(
      try device.sqlite("SELECT group_concat(chain, ' ') FROM gate_receipts ORDER BY id").stdoutText == chains,
      "no chain value changes")
    let undone = try device.tasker(["undo", "r2"])
    #expect(undone.status == 0, "\(undone.stderr)")
    let again = try device.tasker(["receipts", "--verify"])
    #expect(again.status == 0 && again.stdoutText.hasPrefix("Receipts intact: 4 receipts, chained to r4"))
  }
}
