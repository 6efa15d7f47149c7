import AssistantKeys
import TaskerCore

/// The two daily budgets of an assistant key: its actions (calls that
/// change data, counted from receipts) and its reads (reading calls,
/// counted from tallies). Each is a setting `<prefix>.<key id>` or
/// `<prefix>.default` in the gate's settings.
public enum GateBudgetKind: String, CaseIterable, Sendable {
  /// Actions: `tasker gate budget`, default 100 a day.
  case actions
  /// Reads: `tasker gate read-budget`, default 2,000 a day.
  case reads

  /// The setting's prefix: `budget` or `read-budget`.
  public var settingPrefix: String {
    switch self {
    case .actions: return "budget"
    case .reads: return "read-budget"
    }
  }

  /// The budget when no setting names one. Reads: 2,000 a day, twenty
  /// times the actions, because an assistant reads several tasks for each
  /// one it changes (a list, a search, then the task), and still far
  /// below what would let a key copy a store of tens of thousands of
  /// tasks out in one day one `show_task` at a time.
  public var defaultValue: Int {
    switch self {
    case .actions: return 100
    case .reads: return 2_000
    }
  }

  /// The largest setting: 100,000 actions, 1,000,000 reads.
  public var maximum: Int {
    switch self {
    case .actions: return 100_000
    case .reads: return 1_000_000
    }
  }

  /// Reads a budget the user typed: canonical decimal, 0 to `maximum`.
  ///
  /// - Throws: `GateError.invalidBudget` naming the text and this kind.
  public func parse(_ text: String) throws(GateError) -> Int {
    guard let value = Int(text), String(value) == text, (0...maximum).contains(value) else {
      throw GateError.invalidBudget(text, self)
    }
    return value
  }

  /// The key's budget of this kind: its own setting, else the setting of
  /// the newest earlier key of its assistant that has one (a budget follows
  /// the assistant through `taskkey rotate --assistant`), else the default
  /// setting, else `defaultValue`; nil when a setting is not a valid number.
  ///
  /// - Throws: `TaskerError.database`, what `earlier` throws.
  public func budget(
    store: TaskStore, keyID: AssistantKeyID, earlier: () throws -> [AssistantKeyID] = { [] }
  ) throws -> Int? {
    var own = try store.gateSetting(settingPrefix + "." + keyID.text)
    if own == nil {
      for id in try earlier() {
        own = try store.gateSetting(settingPrefix + "." + id.text)
        if own != nil { break }
      }
    }
    guard let text = try own ?? store.gateSetting(settingPrefix + ".default") else {
      return defaultValue
    }
    guard let value = Int(text), (0...maximum).contains(value) else { return nil }
    return value
  }
}
