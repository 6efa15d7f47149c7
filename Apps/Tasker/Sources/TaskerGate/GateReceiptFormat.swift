import CommandKit
import FoundationEssentials
import TaskerCore

/// The JSON form of receipts and approvals, as `tasker receipts --json`
/// and `tasker approvals list --json` print them (docs/formats/receipt.md).
/// Every member is always present; absent values are `null`.
public enum GateReceiptFormat {
  /// The format's version, the `version` member of each receipt: 1.
  public static let version: Int64 = GateReceipt.formatVersion

  /// One receipt as a JSON object.
  ///
  /// - Parameter receipt: a stored receipt.
  /// - Returns: the object.
  public static func json(_ receipt: GateReceipt) -> JSONValue { receipt.jsonObject }

  /// One approval as a JSON object, without its arguments.
  ///
  /// - Parameter approval: a queued or decided approval.
  /// - Returns: the object.
  public static func json(_ approval: GateApproval) -> JSONValue {
    [
      "id": .integer(approval.id), "at": .integer(approval.at), "key_id": .string(approval.keyID.text),
      "assistant": .string(approval.assistant), "tool": .string(approval.tool.rawValue),
      "reason": .string(approval.reason.rawValue), "summary": .string(approval.summary),
      "status": .string(approval.status.rawValue),
    ]
  }

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
    guard object["receipt"] == .string("r\(id)") else { throw GateError.receiptMalformed("receipt is not r<id>") }
    let undoesText = object["undoes"]?.stringValue
    let undoes = undoesText.flatMap { text in Int64(text.dropFirst()).flatMap { "r\($0)" == text ? $0 : nil } }
    guard undoesText == nil || undoes != nil else { throw GateError.receiptMalformed("undoes is not r<n>") }
    // Rules 3 to 9, each word read through its type (TaskerCore's receipt rules).
    do {
      return try GateReceipt.reading(
        id: id, at: object["at"]?.integerValue ?? 0, actor: object["actor"]?.stringValue ?? "",
        keyID: object["key_id"]?.stringValue, assistant: object["assistant"]?.stringValue,
        tool: object["tool"]?.stringValue ?? "", decision: object["decision"]?.stringValue ?? "",
        target: object["target"]?.stringValue ?? "", summary: object["summary"]?.stringValue ?? "",
        undo: object["undo"]?.stringValue, undoes: undoes, approval: object["approval"]?.integerValue)
    } catch TaskerError.receiptInvalid(_, let reason) {
      throw GateError.receiptMalformed(reason)
    }
  }

  /// Reads one receipt from its JSON text: the text must be one JSON
  /// value with no member named twice (a parser that keeps either copy
  /// would read two receipts from one text), then `parse(_:)` applies.
  ///
  /// - Parameter text: the bytes of the JSON text.
  /// - Returns: the receipt.
  /// - Throws: `GateError.receiptMalformed` for text that is not one JSON
  ///   value, and what `parse(_:)` throws.
  public static func parse(text: [UInt8]) throws -> GateReceipt {
    guard let value = JSONValue.parse(text) else {
      throw GateError.receiptMalformed("not one JSON value without duplicate members")
    }
    return try parse(value)
  }
}
