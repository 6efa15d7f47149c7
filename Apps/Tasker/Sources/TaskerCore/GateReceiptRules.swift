/// The rules of docs/formats/receipt.md that a receipt's values must keep
/// (rules 3 to 9; rules 1 and 2, the JSON shape and version, belong to the
/// interchange form). The same rules are the CHECK constraints of
/// `gate_receipts` (GateLedgerSchema.swift), and every row read from the
/// database is checked again here: the database is data, never authority.
extension GateReceipt {
  /// The tools a receipt names: the gate's acting tools, and `undo`.
  public static let tools: Set<String> = [
    "add_task", "edit_task", "complete_task", "delete_task", "add_page", "undo",
  ]

  /// The most task ids a bulk edit's target names.
  public static let maximumBulkTargets = 100

  /// Checks the receipt against rules 3 to 9 of docs/formats/receipt.md,
  /// in their order.
  ///
  /// - Throws: `TaskerError.receiptInvalid` naming the receipt and the
  ///   first rule it breaks.
  public func check() throws {
    func rule(_ number: Int, _ holds: Bool, _ what: String) throws {
      guard holds else { throw TaskerError.receiptInvalid(id: id, reason: "rule \(number): \(what)") }
    }
    try rule(3, id >= 1 && at >= 0, "id must be at least 1 and at not negative")
    let isAssistant = actor == "assistant"
    try rule(4, ["trusted", "assistant", "user"].contains(actor), "unknown actor")
    try rule(
      4, isAssistant == (keyID != nil) && isAssistant == (assistant != nil), "actor, key_id and assistant disagree")
    try rule(4, keyID.map(Self.isKeyID) ?? true, "key_id is not tkid_ and 16 lowercase hex digits")
    try rule(
      4, assistant.map { (1...64).contains($0.unicodeScalars.count) } ?? true, "assistant is not 1-64 characters")
    try rule(5, Self.tools.contains(tool), "unknown tool")
    guard let kind = Self.decisionKind(decision) else {
      throw TaskerError.receiptInvalid(id: id, reason: "rule 5: unknown decision")
    }
    let allowed: Set<DecisionKind> =
      switch actor {
      case "trusted": [.allow]
      case "assistant": [.allow, .ask, .refuse, .approved]
      default: [.denied, .undone]
      }
    try rule(5, allowed.contains(kind), "decision \(decision) is not one actor \(actor) makes")
    try rule(5, (tool == "undo") == (kind == .undone), "tool is undo exactly when decision is undone")
    try rule(6, isTarget(for: kind), "target is not the form decision \(decision) and tool \(tool) call for")
    try rule(7, isUndo(for: kind), "undo does not match the tool and target, or the call did not run")
    try rule(8, (kind == .undone) == (undoes != nil), "undoes is set exactly when decision is undone")
    try rule(8, undoes.map { $0 >= 1 && $0 < id } ?? true, "undoes must name an earlier receipt")
    try rule(9, approval.map { $0 >= 1 } ?? true, "approval must be at least 1")
    try rule(9, (approval != nil) == [.ask, .approved, .denied].contains(kind), "approval is set exactly when asked")
  }

  enum DecisionKind: Hashable {
    case allow, ask, refuse, approved, denied, undone
  }

  static func decisionKind(_ text: String) -> DecisionKind? {
    switch text {
    case "allow": return .allow
    case "approved": return .approved
    case "denied": return .denied
    case "undone": return .undone
    case "ask:risky", "ask:quiet-hours", "ask:quiet-hours-undecidable": return .ask
    case "refuse:budget-exhausted", "refuse:budget-undecidable": return .refuse
    default:
      let prefix = "refuse:missing-grant:"
      guard text.hasPrefix(prefix) else { return nil }
      let grant = Array(text.utf8.dropFirst(prefix.count))
      let allowed = Array("abcdefghijklmnopqrstuvwxyz0123456789._:-".utf8)
      guard (1...64).contains(grant.count), (97...122).contains(grant[0]), grant.allSatisfy(allowed.contains)
      else { return nil }
      return .refuse
    }
  }

  static func isKeyID(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    return bytes.count == 21 && text.hasPrefix("tkid_")
      && bytes[5...].allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
  }

  /// A canonical decimal id, 1 to 2^63-1: digits only, no leading zero.
  static func id(_ text: Substring) -> Int64? {
    guard let first = text.utf8.first, first != UInt8(ascii: "0"),
      text.utf8.allSatisfy({ (48...57).contains($0) })
    else { return nil }
    return Int64(text)
  }

  /// The id after `prefix` in the target, when the target has that form.
  func targetID(_ prefix: String) -> Int64? {
    guard target.hasPrefix(prefix) else { return nil }
    return Self.id(target.dropFirst(prefix.count))
  }

  private func isTarget(for kind: DecisionKind) -> Bool {
    switch kind {
    case .allow, .approved:
      switch tool {
      case "add_page": return targetID("page/") != nil
      case "edit_task": return targetID("task/") != nil || isBulkTarget
      default: return targetID("task/") != nil
      }
    case .ask, .denied: return approval.map { target == "approval/\($0)" } ?? false
    case .refuse: return target.isEmpty
    case .undone: return undoes.map { target == "receipt/\($0)" } ?? false
    }
  }

  private var isBulkTarget: Bool {
    guard target.hasPrefix("tasks/") else { return false }
    let parts = target.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
    let ids = parts.compactMap(Self.id)
    return ids.count == parts.count && (2...Self.maximumBulkTargets).contains(ids.count) && Set(ids).count == ids.count
  }

  private func isUndo(for kind: DecisionKind) -> Bool {
    let ran = kind == .allow || kind == .approved
    guard let undo else { return !(ran && (tool == "add_task" || tool == "add_page")) }
    guard ran else { return false }
    switch tool {
    case "add_task": return targetID("task/").map { undo == "delete-task:\($0)" } ?? false
    case "complete_task": return targetID("task/").map { undo == "reopen-task:\($0)" } ?? false
    case "add_page": return targetID("page/").map { undo == "delete-page:\($0)" } ?? false
    default: return false
    }
  }
}
