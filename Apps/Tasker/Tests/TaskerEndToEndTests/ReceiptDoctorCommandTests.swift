import Foundation
import TaskerTestSupport
import Testing

/// `tasker doctor` reports a broken receipt chain with the words of
/// `tasker receipts --verify`; the database is changed through the real
/// `sqlite3` shell, as `ReceiptChainCommandTests` does.
@Suite("tasker doctor checks the receipt chain")
struct ReceiptDoctorCommandTests {
  /// The doctor's exit status and its findings of the receipt codes.
  static func receiptFindings(_ device: TestDevice) throws -> (status: Int32, findings: [[String: Any]]) {
    let result = try device.tasker(["doctor", "--json"])
    let object = try #require(try result.json() as? [String: Any], "\(result.stderr)")
    let findings = try #require(object["findings"] as? [[String: Any]])
    let codes: Set = ["receipts_intact", "receipt_head_unchecked", "receipts_tampered"]
    return (result.status, findings.filter { codes.contains($0["code"] as? String ?? "") })
  }

  @Test func anIntactChainIsOK() throws {
    let device = try ReceiptChainCommandTests.fourReceipts()
    let (status, findings) = try Self.receiptFindings(device)
    #expect(status == 0)
    #expect(findings.count == 1 && findings.first?["code"] as? String == "receipts_intact", "\(findings)")
    #expect(findings.first?["severity"] as? String == "ok")
    #expect(findings.first?["message"] as? String == "4 receipts chained, head at r4, 0 not yet anchored")
  }

  @Test func anEditedReceiptIsAnErrorNamingTheFirstBrokenLink() throws {
    let device = try ReceiptChainCommandTests.fourReceipts()
    let changed = try device.sqlite(
      ReceiptChainCommandTests.noTriggers + "UPDATE gate_receipts SET summary = 'nothing happened' WHERE id = 2")
    #expect(changed.status == 0, "\(changed.stderr)")
    let (status, findings) = try Self.receiptFindings(device)
    #expect(status == 18, "doctor's exit for an error finding")
    let finding = try #require(findings.first, "\(findings)")
    #expect(findings.count == 1 && finding["code"] as? String == "receipts_tampered")
    #expect(finding["severity"] as? String == "error" && finding["subject"] as? String == "r2")
    let verify = try device.tasker(["receipts", "--verify"])
    let detail = verify.stdoutText.split(separator: "\n").last.map { String($0.dropFirst("r2: ".count)) }
    #expect(finding["message"] as? String == "chain_mismatch: \(detail ?? "")", "the verifier's words")
    let text = try device.tasker(["doctor"])
    #expect(text.status == 18 && text.stdoutText.contains("error\treceipts_tampered r2: chain_mismatch: "))
  }

  @Test func aLockedVaultLeavesTheHeadNotCheckedWithoutFailing() throws {
    let device = try ReceiptChainCommandTests.fourReceipts()
    try device.vault().lock()
    let (status, findings) = try Self.receiptFindings(device)
    #expect(status == 0, "not a failure")
    #expect(findings.count == 1 && findings.first?["code"] as? String == "receipt_head_unchecked", "\(findings)")
    #expect(findings.first?["severity"] as? String == "info")
  }
}
