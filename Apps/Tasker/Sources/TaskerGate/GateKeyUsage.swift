import AssistantKeys
import FoundationEssentials
import TaskerCore

/// One registered assistant key as the gate sees it today, for `tasker
/// gate show`: its budgets of actions and reads (as the gate would decide
/// them), the calls it ran and the reads it made since the start of the
/// day, and what waits in its approval queue.
public struct GateKeyUsage: Sendable, Equatable {
  /// The key's public id.
  public var keyID: AssistantKeyID
  /// The assistant's name (the registry's safe alphabet).
  public var name: String
  /// The key's status word now: active, overlapping, revoked or expired.
  public var status: String
  /// The daily budget the gate applies to it (its own setting, else that
  /// of the key it replaced, else the default); nil when a setting is
  /// damaged, in which case the gate refuses its acting calls.
  public var budget: Int?
  /// The calls it ran today (allowed, or approved and run): what the
  /// budget counts.
  public var actionsToday: Int
  /// The daily budget of reads the gate applies to it, as `budget` is
  /// chosen; nil when a setting is damaged (its reads are refused).
  public var readBudget: Int?
  /// The reading calls it was admitted for today: what the read budget counts.
  public var readsToday: Int
  /// How many of its calls wait for approval.
  public var pendingCount: Int
  /// The bytes their stored arguments hold (what the queue's byte cap counts).
  public var pendingBytes: Int

  /// The usage of every key in `records`, in their order.
  ///
  /// - Parameters:
  ///   - records: the registry's keys (`AssistantKeyRegistry.keys()`).
  ///   - store: the user's store, or nil when there is none yet (nothing
  ///     ran, nothing waits, only the default budget applies).
  ///   - now: the time "today" is read at.
  ///   - calendar: the calendar with the user's time zone.
  /// - Returns: one row per key.
  /// - Throws: `TaskerError.database`.
  public static func rows(
    of records: [AssistantKeyRecord], store: TaskStore?, now: Date = Date(), calendar: Calendar = .current
  ) throws -> [GateKeyUsage] {
    let since = Int64(calendar.startOfDay(for: now).timeIntervalSince1970)
    return try records.map { record in
      guard let store else {
        return GateKeyUsage(
          keyID: record.id, name: record.name, status: record.status.word, budget: GateToolbox.defaultBudget,
          actionsToday: 0, readBudget: GateBudgetKind.reads.defaultValue, readsToday: 0, pendingCount: 0,
          pendingBytes: 0)
      }
      let earlier = { GateKeyLineage.earlier(of: record.id, name: record.name, among: records) }
      let budget = try GateBudgetKind.actions.budget(store: store, keyID: record.id, earlier: earlier)
      let readBudget = try GateBudgetKind.reads.budget(store: store, keyID: record.id, earlier: earlier)
      let load = try store.pendingApprovalLoad(keyID: record.id)
      return GateKeyUsage(
        keyID: record.id, name: record.name, status: record.status.word, budget: budget,
        actionsToday: try store.actionCount(keyID: record.id, since: since), readBudget: readBudget,
        readsToday: try store.tallied(.read, keyID: record.id, since: since), pendingCount: load.count,
        pendingBytes: load.bytes)
    }
  }
}
