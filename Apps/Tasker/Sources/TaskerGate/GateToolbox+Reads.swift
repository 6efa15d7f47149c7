import AssistantKeys
import CommandKit
import FoundationEssentials
import TaskerCore

/// Reads and refusals of an assistant: the daily read budget, the tallies
/// that become aggregated receipts, and the per-key limit of single
/// refusal receipts (docs/formats/receipt.md, *Aggregated receipts*).
extension GateToolbox {
  /// Admits a reading call of an assistant: from a block of reads this
  /// process already reserved (`GateReadLeases`, no write), or else by
  /// reserving one in a short write transaction of its own, where closed
  /// windows of the key are folded into receipts, its unspent reads of
  /// closed windows given back, and the day's reads counted against the
  /// read budget. Trusted mode is never budgeted and leaves no read
  /// receipt; a call that lacks its grant is left to `settle`, which
  /// refuses it as before (no receipt, no count).
  ///
  /// - Returns: nil when the read may run, else the refusal to throw (its
  ///   receipt, or its count, is committed).
  /// - Throws: `TaskerError.database`.
  func admitRead(_ call: GateCall) throws -> MCPError? {
    guard caller != .trusted, let keyID = identity.keyID else { return nil }
    if let grant = call.action.requiredGrant, !identity.grants.contains(grant) { return nil }
    let now = clock()
    let block = GateReadLeases.Block(keyID: keyID, tool: call.tool, window: window(of: now))
    if stores.reads.spend(block) { return nil }
    let reserved = try stores.writing { try store.inOneLightTransaction { try reserveReads(block, at: now) } }
    switch reserved {
    case .success(let reads):
      // Held only once the reservation is committed.
      stores.reads.hold(block, reserved: reads)
      return nil
    case .failure(let refused):
      return refused
    }
  }

  /// Reserves a block of reads inside the caller's write transaction.
  ///
  /// - Returns: the reads counted (at least 1: the caller's own), or the
  ///   refusal whose receipt or count this wrote.
  private func reserveReads(_ block: GateReadLeases.Block, at now: Date) throws -> Result<Int, MCPError> {
    for unspent in stores.reads.closedBlocks(of: block.keyID, besides: block.window) {
      try store.untallyReads(
        keyID: block.keyID, tool: unspent.block.tool, window: unspent.block.window, calls: unspent.reads)
    }
    try foldClosedWindows(block.window)
    let limit = try? GateBudgetKind.reads.budget(store: store, keyID: block.keyID) {
      try lineage?.earlierKeys(of: block.keyID, name: identity.name) ?? []
    }
    guard let limit = limit ?? nil else {
      try recordRefusal(tool: block.tool, .readBudgetUndecidable, summary: "refused")
      return .failure(
        MCPError(
          code: MCPError.refusedCode,
          message: "refused: this key's budget of reads could not be checked (damaged setting)",
          data: ["budget": .string(GateBudgetKind.reads.rawValue)]))
    }
    let room = limit - (try store.tallied(.read, keyID: block.keyID, since: dayStart(at: now)))
    guard room > 0 else {
      try recordRefusal(tool: block.tool, .readBudgetExhausted, summary: "refused")
      return .failure(
        MCPError(
          code: MCPError.refusedCode, message: "refused: this key's budget of reads for today (\(limit)) is used up",
          data: ["budget": .string(GateBudgetKind.reads.rawValue), "limit": .integer(Int64(limit))]))
    }
    let reads = min(room, stores.reads.wanted(block))
    try store.tally(
      .read, keyID: block.keyID, assistant: identity.name, tool: block.tool, window: block.window, calls: reads)
    return .success(reads)
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

  /// What a reading call's answer depends on, as the key it is remembered
  /// under (`GateReadMemo`): the call, whether the caller may read
  /// contexts, and the day (which tasks are overdue). Nil for a call whose
  /// answer is not remembered: one with note text, or any other tool.
  static func memoKey(_ call: GateCall, mayReadContexts: Bool, today: CalendarDate) -> String? {
    let scope = "\(mayReadContexts ? "contexts" : "titles") \(today)"
    switch call {
    case .listTasks(let filter, false, let limit): return "list_tasks \(filter.rawValue) \(limit) \(scope)"
    case .searchTasks(let query, false, let limit): return "search_tasks \(limit) \(scope) \(query)"
    default: return nil
    }
  }

  /// The day `now` is in: its bounds in `calendar` (seconds since 1970)
  /// and its date, read from the calendar once a day (about 5 µs each
  /// time) rather than once a call, and kept in `day`. Nil when the
  /// calendar gives no next midnight.
  private func currentDay(at now: Date) -> (start: Int64, end: Int64, today: CalendarDate)? {
    let seconds = Int64(now.timeIntervalSince1970)
    if let day, seconds >= day.start, seconds < day.end { return day }
    let start = calendar.startOfDay(for: now)
    day = calendar.date(byAdding: .day, value: 1, to: start).map {
      (
        Int64(start.timeIntervalSince1970), Int64($0.timeIntervalSince1970),
        CalendarDate.today(now: now, timeZone: calendar.timeZone)
      )
    }
    return day
  }

  /// `GateWindow.start(of:calendar:)`, from the current day's bounds.
  func window(of now: Date) -> Int64 {
    guard let day = currentDay(at: now) else { return GateWindow.start(of: now, calendar: calendar) }
    let offset = max(0, Int64(now.timeIntervalSince1970) - day.start)
    return day.start + offset / GateWindow.seconds * GateWindow.seconds
  }

  /// `CalendarDate.today(now:timeZone:)` in the calendar's zone, from the
  /// current day: the same date from midnight to midnight.
  func today(at now: Date) -> CalendarDate {
    currentDay(at: now)?.today ?? CalendarDate.today(now: now, timeZone: calendar.timeZone)
  }

  /// The start of the day `now` is in (local midnight), from the current day.
  func dayStart(at now: Date) -> Int64 {
    currentDay(at: now)?.start ?? Int64(calendar.startOfDay(for: now).timeIntervalSince1970)
  }
}
