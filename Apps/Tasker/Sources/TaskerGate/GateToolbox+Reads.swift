import AssistantKeys
import CommandKit
import FoundationEssentials
import TaskerCore

/// Reads and refusals of an assistant: the daily read budget, the tallies
/// that become aggregated receipts, and the per-key limit of single
/// refusal receipts (docs/formats/receipt.md, *Aggregated receipts*).
extension GateToolbox {
  /// Admits a reading call of an assistant, inside the write transaction
  /// the caller holds: closed windows of the key are folded into receipts,
  /// the day's reads are counted against the read budget, and an admitted
  /// read is counted into its tally (one upsert). Trusted mode is never
  /// budgeted and leaves no read receipt; a call that lacks its grant is
  /// left to `settle`, which refuses it as before (no receipt, no count).
  ///
  /// - Returns: nil when the read may run, else the refusal to throw after
  ///   the commit (its receipt, or its count, is written).
  /// - Throws: `TaskerError.database`.
  func admitRead(_ call: GateCall) throws -> MCPError? {
    guard caller != .trusted, let keyID = identity.keyID else { return nil }
    if let grant = call.action.requiredGrant, !identity.grants.contains(grant) { return nil }
    let now = clock()
    let window = GateWindow.start(of: now, calendar: calendar)
    try foldClosedWindows(window)
    let limit = try? GateBudgetKind.reads.budget(store: store, keyID: keyID) {
      try lineage?.earlierKeys(of: keyID, name: identity.name) ?? []
    }
    guard let limit = limit ?? nil else {
      try recordRefusal(tool: call.tool, .readBudgetUndecidable, summary: "refused")
      return MCPError(
        code: MCPError.refusedCode,
        message: "refused: this key's budget of reads could not be checked (damaged setting)",
        data: ["budget": .string(GateBudgetKind.reads.rawValue)])
    }
    let day = Int64(calendar.startOfDay(for: now).timeIntervalSince1970)
    guard try store.tallied(.read, keyID: keyID, since: day) < limit else {
      try recordRefusal(tool: call.tool, .readBudgetExhausted, summary: "refused")
      return MCPError(
        code: MCPError.refusedCode, message: "refused: this key's budget of reads for today (\(limit)) is used up",
        data: ["budget": .string(GateBudgetKind.reads.rawValue), "limit": .integer(Int64(limit))])
    }
    try store.tally(.read, keyID: keyID, assistant: identity.name, tool: call.tool, window: window)
    return nil
  }

  /// Folds the key's tallies of closed windows into receipts: reads
  /// before `window` (the gate clock's current one when nil), refusals
  /// before the store clock's current one; at the key's first call after
  /// a window closes. One indexed read when there is nothing to fold.
  ///
  /// - Throws: `TaskerError.database`, `.damagedDatabase`, `.receiptInvalid`.
  func foldClosedWindows(_ window: Int64? = nil) throws {
    guard caller != .trusted, let keyID = identity.keyID else { return }
    let window = window ?? GateWindow.start(of: clock(), calendar: calendar)
    let cut = TaskStore.TallyCut.closed(
      of: keyID, reads: window, refusals: TaskStore.refusalWindow(calendar: calendar))
    guard try store.hasOpenTallies(cut) else { return }
    try store.foldTallies(cut, now: Int64(clock().timeIntervalSince1970))
  }

  /// Records a refusal of this caller's call: its own receipt, or a count
  /// in the key's `refused` tally once the key is past
  /// `TaskStore.refusalReceiptLimit` refusal receipts in the window.
  ///
  /// - Throws: `TaskerError.database`.
  func recordRefusal(tool: GateTool, _ refusal: ReceiptRefusal, summary: String) throws {
    try store.recordRefusal(receipt(tool: tool, decision: .refuse(refusal), summary: summary), calendar: calendar)
  }
}
