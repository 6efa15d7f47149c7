import TaskerCore

/// The JSON form of receipts and approvals, as `tasker receipts --json`
/// and `tasker approvals list --json` print them (docs/formats/receipt.md).
/// Every member is always present; absent values are `null`.
public enum GateReceiptFormat {
  /// The format's version, the `version` member of each receipt: 1.
  public static let version: Int64 = 1

  /// One receipt as a JSON object.
  ///
  /// - Parameter receipt: a stored receipt.
  /// - Returns: the object.
  public static func json(_ receipt: GateReceipt) -> JSONValue {
    [
      "version": .integer(version), "receipt": .string("r\(receipt.id)"), "id": .integer(receipt.id),
      "at": .integer(receipt.at), "actor": .string(receipt.actor), "key_id": optional(receipt.keyID),
      "assistant": optional(receipt.assistant), "tool": .string(receipt.tool), "decision": .string(receipt.decision),
      "target": .string(receipt.target), "summary": .string(receipt.summary), "undo": optional(receipt.undo),
      "undoes": optional(receipt.undoes.map { "r\($0)" }), "approval": receipt.approval.map { .integer($0) } ?? .null,
    ]
  }

  /// One approval as a JSON object, without its arguments.
  ///
  /// - Parameter approval: a queued or decided approval.
  /// - Returns: the object.
  public static func json(_ approval: GateApproval) -> JSONValue {
    [
      "id": .integer(approval.id), "at": .integer(approval.at), "key_id": .string(approval.keyID),
      "assistant": .string(approval.assistant), "tool": .string(approval.tool), "reason": .string(approval.reason),
      "summary": .string(approval.summary), "status": .string(approval.status),
    ]
  }

  private static func optional(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
}
