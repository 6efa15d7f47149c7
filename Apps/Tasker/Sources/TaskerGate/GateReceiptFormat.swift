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

  private static let members: [String: String] = [
    "version": "integer", "receipt": "string", "id": "integer", "at": "integer", "actor": "string",
    "key_id": "string?", "assistant": "string?", "tool": "string", "decision": "string", "target": "string",
    "summary": "string", "undo": "string?", "undoes": "string?", "approval": "integer?",
  ]

  /// Reads one receipt object, applying the rules of
  /// docs/formats/receipt.md in their order.
  ///
  /// - Parameter value: a JSON value.
  /// - Returns: the receipt.
  /// - Throws: `GateError.receiptUnsupportedVersion` for a version other
  ///   than 1, `GateError.receiptMalformed` naming the first rule broken.
  public static func parse(_ value: JSONValue) throws -> GateReceipt {
    guard case .object(let object) = value, Set(object.keys) == Set(members.keys) else {
      throw GateError.receiptMalformed("not an object with exactly the 14 members")
    }
    for (name, type) in members {
      let optional = type.hasSuffix("?")
      switch (object[name], type.hasPrefix("integer")) {
      case (.null?, _) where optional: continue
      case (.integer?, true), (.string?, false): continue
      default: throw GateError.receiptMalformed("'\(name)' is not \(type)")
      }
    }
    guard object["version"] == .integer(version) else {
      throw GateError.receiptUnsupportedVersion(object["version"]?.integerValue ?? 0)
    }
    let id = object["id"]?.integerValue ?? 0
    guard id >= 1, (object["at"]?.integerValue ?? -1) >= 0, object["receipt"] == .string("r\(id)") else {
      throw GateError.receiptMalformed("id, at or receipt out of range")
    }
    let actor = object["actor"]?.stringValue ?? ""
    let keyID = object["key_id"]?.stringValue
    let assistant = object["assistant"]?.stringValue
    guard ["trusted", "assistant", "user"].contains(actor), (actor == "assistant") == (keyID != nil),
      (actor == "assistant") == (assistant != nil), keyID.map(isKeyID) ?? true
    else { throw GateError.receiptMalformed("actor, key_id and assistant do not agree") }
    let decision = object["decision"]?.stringValue ?? ""
    guard isDecision(decision) else { throw GateError.receiptMalformed("unknown decision") }
    let undo = object["undo"]?.stringValue
    guard undo.map(isUndo) ?? true, undo == nil || decision == "allow" || decision == "approved" else {
      throw GateError.receiptMalformed("bad undo")
    }
    let undoes = object["undoes"]?.stringValue.flatMap { $0.hasPrefix("r") ? Int64($0.dropFirst()) : nil }
    guard (decision == "undone") == (object["undoes"] != .null),
      object["undoes"] == .null || undoes.map({ $0 >= 1 && $0 < id }) == true,
      object["undoes"]?.stringValue.map({ $0 == "r\(undoes ?? 0)" }) ?? true
    else { throw GateError.receiptMalformed("bad undoes") }
    let approval = object["approval"]?.integerValue
    guard approval.map({ $0 >= 1 }) ?? true, decision != "approved" || approval != nil else {
      throw GateError.receiptMalformed("bad approval")
    }
    var receipt = GateReceipt(
      actor: actor, keyID: keyID, assistant: assistant, tool: object["tool"]?.stringValue ?? "", decision: decision,
      target: object["target"]?.stringValue ?? "", summary: object["summary"]?.stringValue ?? "", undo: undo,
      undoes: undoes, approval: approval)
    receipt.id = id
    receipt.at = object["at"]?.integerValue ?? 0
    return receipt
  }

  private static func isKeyID(_ text: String) -> Bool {
    text.count == 21 && text.hasPrefix("tkid_")
      && text.dropFirst(5).utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
  }

  private static func isDecision(_ text: String) -> Bool {
    let fixed = [
      "allow", "approved", "denied", "undone", "ask:risky", "ask:quiet-hours", "ask:quiet-hours-undecidable",
      "refuse:budget-exhausted", "refuse:budget-undecidable",
    ]
    if fixed.contains(text) { return true }
    let prefix = "refuse:missing-grant:"
    guard text.hasPrefix(prefix) else { return false }
    let grant = text.dropFirst(prefix.count).utf8
    return (1...64).contains(grant.count) && (97...122).contains(grant.first ?? 0)
      && grant.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || Array(".:_-".utf8).contains($0) }
  }

  private static func isUndo(_ text: String) -> Bool {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, ["delete-task", "delete-page", "reopen-task"].contains(String(parts[0])),
      let number = parts[1].first, number != "0", parts[1].utf8.allSatisfy({ (48...57).contains($0) })
    else { return false }
    return parts[1].count <= 18
  }
}
