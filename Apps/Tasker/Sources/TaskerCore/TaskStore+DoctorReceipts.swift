/// `tasker doctor`'s receipt check: the verification behind `tasker
/// receipts --verify` (`verifyReceipts()`), as one finding.
extension TaskStore {
  /// Step 7: verifies the receipt chain and head and reports it with the
  /// verifier's own words (its outcome and its first-broken-link detail):
  /// intact is `ok`; a head not checked because the vault is locked is
  /// `info` (the chain itself was verified), never a failure; anything
  /// the verifier calls tampered is an `error` naming the first broken
  /// receipt, so `tasker doctor` exits 18 as for any error finding.
  func checkReceipts(into report: inout Diagnosis) {
    let verified: ReceiptChainReport
    do {
      verified = try verifyReceipts()
    } catch {
      report.add(.error, .checkFailed, subject: "receipts", "cannot verify the receipts: \(error)")
      return
    }
    let counted = "\(verified.count) receipt\(verified.count == 1 ? "" : "s")"
    switch verified.outcome {
    case .intact:
      let head = verified.headID.map { "head at r\($0)" } ?? "no head yet"
      report.add(.ok, .receiptsIntact, "\(counted) chained, \(head), \(verified.unanchored) not yet anchored")
    case .headUnchecked:
      report.add(
        .info, .receiptHeadUnchecked, subject: "receipts.head",
        "\(counted) chained; head not checked: \(verified.detail ?? "the vault is locked")",
        hint: "run 'taskkey unlock', then 'tasker doctor' again")
    case .missingChain, .receiptInvalid, .chainMismatch, .headMalformed, .headForged, .headNotOnChain:
      report.add(
        .error, .receiptsTampered, subject: verified.brokenID.map { "r\($0)" } ?? "receipts.head",
        "\(verified.outcome.rawValue): \(verified.detail ?? "")",
        hint: "the receipts were altered outside Tasker: 'tasker receipts --verify' says where; restore the "
          + "database from a backup")
    }
  }
}
