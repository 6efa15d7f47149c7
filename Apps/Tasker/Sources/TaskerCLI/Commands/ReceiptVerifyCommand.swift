import CommandKit
import TaskerCore

/// `tasker receipts --verify`: the receipt chain recomputed from the first
/// receipt and the head checked (docs/formats/receipt.md, *Verifying*).
extension ReceiptsCommand {
  /// The flag that verifies instead of listing.
  static let verifyOption = OptionSpec.flag(
    "--verify",
    help: "Recompute the receipts' hash chain from the first receipt and check receipts.head under the vault's key; "
      + "exit 15 when a receipt was edited, removed, inserted or moved, or the tail cut back past the head.")

  /// The report as the project's JSON (ids as `rN`).
  static func json(_ report: ReceiptChainReport) -> JSONValue {
    func id(_ value: Int64?) -> JSONValue { value.map { .string("r\($0)") } ?? .null }
    return [
      "intact": .bool(report.outcome == .intact), "outcome": .string(report.outcome.rawValue),
      "broken": id(report.brokenID), "detail": .optional(report.detail), "count": .int(report.count),
      "last": id(report.lastID), "head": id(report.headID), "unanchored": .int(report.unanchored),
    ]
  }

  /// Verifies, prints the report, and ends with `tampered` (15) when the
  /// receipts were altered, `vaultLocked` (14) when the head could not be
  /// checked.
  func runVerify(_ context: CommandContext) throws {
    let report = try context.readerIfPresent()?.verifyReceipts() ?? .empty
    if json {
      try context.printJSON(.object(["verification": Self.json(report)]))
    } else if report.outcome == .intact {
      var line = "Receipts intact: \(report.count) receipt\(report.count == 1 ? "" : "s")"
      if let last = report.lastID { line += ", chained to r\(last)" }
      if let head = report.headID {
        line += "; head at r\(head), \(report.unanchored) after it not yet anchored."
      } else {
        line += "; no head yet (\(report.unanchored) not anchored: the vault has not been readable at a write)."
      }
      try context.print(line)
    } else {
      let at = report.brokenID.map { "r\($0): " } ?? ""
      try context.print(
        "Receipts \(report.outcome.isTampered ? "TAMPERED" : "not verified"): \(report.outcome.rawValue)")
      try context.print("\(at)\(report.detail ?? "")")
    }
    if report.outcome.isTampered { throw QuietExit(code: .tampered) }
    if report.outcome == .headUnchecked { throw QuietExit(code: .vaultLocked) }
  }
}
