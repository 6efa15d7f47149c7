import AssistantKeys

/// The rules of docs/formats/receipt.md that a receipt's values must keep
/// (rules 3 to 9; rules 1 and 2, the JSON shape and version, belong to the
/// interchange form). The same rules are the CHECK constraints of
/// `gate_receipts` (GateLedgerSchema.swift), and every row read from the
/// database is checked again here: the database is data, never authority.
extension GateReceipt {
  /// The most task ids a bulk edit's target names.
  public static let maximumBulkTargets = 100

  /// Reads a receipt from its stored words, applying rules 3 to 9 of
  /// docs/formats/receipt.md in their order: each word is read through
  /// its type's failable initialiser, and a word no case has is an error
  /// naming the receipt and the rule, never a default.
  ///
  /// - Parameters: the receipt's values as stored (a row of
  ///   `gate_receipts`, or the members of its JSON form).
  /// - Returns: the receipt.
  /// - Throws: `TaskerError.receiptInvalid` naming the receipt and the
  ///   first rule it breaks.
  public static func reading(
    id: Int64, at: Int64, actor: String, keyID: String?, assistant: String?, tool: String, decision: String,
    target: String, summary: String, undo: String?, undoes: Int64?, approval: Int64?
  ) throws -> GateReceipt {
    func fail(_ number: Int, _ what: String) -> TaskerError {
      TaskerError.receiptInvalid(id: id, reason: "rule \(number): \(what)")
    }
    guard id >= 1 && at >= 0 else { throw fail(3, "id must be at least 1 and at not negative") }
    guard let typedActor = GateActor(rawValue: actor) else { throw fail(4, "unknown actor") }
    let isAssistant = typedActor == .assistant
    guard isAssistant == (keyID != nil) && isAssistant == (assistant != nil) else {
      throw fail(4, "actor, key_id and assistant disagree")
    }
    let typedKey = keyID.flatMap(AssistantKeyID.init)
    guard (keyID == nil) == (typedKey == nil) else { throw fail(4, "key_id is not tkid_ and 16 lowercase hex digits") }
    guard let typedTool = GateTool(rawValue: tool) else { throw fail(5, "unknown tool") }
    guard let typedDecision = ReceiptDecision(rawValue: decision) else { throw fail(5, "unknown decision") }
    let typedUndo = undo.flatMap(ReceiptUndo.init(rawValue:))
    var receipt = GateReceipt(
      actor: typedActor, keyID: typedKey, assistant: assistant, tool: typedTool, decision: typedDecision,
      target: target, summary: summary, undo: typedUndo, undoes: undoes, approval: approval)
    receipt.id = id
    receipt.at = at
    // Rule 4's last check (the name's length) and rules 5 and 6 come before
    // an undo that does not parse (rule 7).
    try receipt.check(rules: 3...6)
    guard (undo == nil) == (typedUndo == nil) else {
      throw fail(7, "undo does not match the tool and target, or the call did not run")
    }
    try receipt.check(rules: 7...9)
    return receipt
  }

  /// Checks the receipt against rules 3 to 9 of docs/formats/receipt.md,
  /// in their order.
  ///
  /// - Throws: `TaskerError.receiptInvalid` naming the receipt and the
  ///   first rule it breaks.
  public func check() throws {
    try check(rules: 3...9)
  }

  /// Checks the rules in `rules`, in order.
  func check(rules: ClosedRange<Int>) throws {
    func rule(_ number: Int, _ holds: @autoclosure () -> Bool, _ what: String) throws {
      guard rules.contains(number), !holds() else { return }
      throw TaskerError.receiptInvalid(id: id, reason: "rule \(number): \(what)")
    }
    let kind = decision.kind
    try rule(3, id >= 1 && at >= 0, "id must be at least 1 and at not negative")
    let isAssistant = actor == .assistant
    try rule(
      4, isAssistant == (keyID != nil) && isAssistant == (assistant != nil), "actor, key_id and assistant disagree")
    try rule(
      4, assistant.map { (1...64).contains($0.unicodeScalars.count) } ?? true, "assistant is not 1-64 characters")
    try rule(5, actor.decisions.contains(kind), "decision \(decision.rawValue) is not one actor \(actor) makes")
    try rule(5, (tool == .undo) == (kind == .undone), "tool is undo exactly when decision is undone")
    try rule(
      5, kind != .changed || tool.isUserChange, "decision changed is made only with delete_task, edit_task, delete_page"
    )
    try rule(5, !tool.isUserOnly || kind == .changed, "tool delete_page is made only with decision changed")
    try rule(5, fitsReading, "a reading tool goes only with read or a read refusal, and read only with a reading tool")
    try rule(
      6, isTarget, "target is not the form decision \(decision.rawValue) and tool \(tool.rawValue) call for")
    try rule(7, isUndo, "undo does not match the tool and target, or the call did not run")
    try rule(8, (kind == .undone) == (undoes != nil), "undoes is set exactly when decision is undone")
    try rule(8, undoes.map { $0 >= 1 && $0 < id } ?? true, "undoes must name an earlier receipt")
    try rule(9, approval.map { $0 >= 1 } ?? true, "approval must be at least 1")
    try rule(9, (approval != nil) == kind.hasApproval, "approval is set exactly when asked")
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

  private var isTarget: Bool {
    switch decision.kind {
    case .allow, .approved, .changed:
      return targetID(tool.targetPrefix) != nil || (tool == .editTask && isBulkTarget)
    case .ask, .denied: return approval.map { target == "approval/\($0)" } ?? false
    case .refuse:
      guard decision == .refuse(.rateLimited) else { return target.isEmpty }
      return targetID("refusals/") != nil
    case .read: return targetID("reads/") != nil
    case .failed: return target.isEmpty || targetID(tool.targetPrefix) != nil || (tool == .editTask && isBulkTarget)
    case .undone: return undoes.map { target == "receipt/\($0)" } ?? false
    }
  }

  /// Rule 5's reading part: a reading tool has decision `read` or a
  /// refusal that fits reads; every other tool neither `read` nor such a
  /// refusal.
  private var fitsReading: Bool {
    switch decision {
    case .read: return tool.isRead
    case .refuse(let refusal): return tool.isRead ? refusal.fitsReads : refusal.fitsActions
    case .allow, .ask, .approved, .denied, .undone, .changed, .failed: return !tool.isRead
    }
  }

  private var isBulkTarget: Bool {
    guard target.hasPrefix("tasks/") else { return false }
    let parts = target.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
    let ids = parts.compactMap(Self.id)
    return ids.count == parts.count && (2...Self.maximumBulkTargets).contains(ids.count) && Set(ids).count == ids.count
  }

  private var isUndo: Bool {
    let ran = decision.kind.ran
    guard let undo else { return !(ran && (UndoKind.of(tool)?.isRequired ?? false)) }
    return ran && undo.kind.tool == tool && targetID(tool.targetPrefix) == undo.id
  }
}
