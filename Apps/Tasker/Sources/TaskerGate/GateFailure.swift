import TaskerCore

/// The `failed` receipt of an allowed acting call that ran and failed in
/// the store (receipt.md, decision `failed`): its change rolled back, the
/// receipt written in the same decision transaction.
enum GateFailure {
  /// The receipt's summary: `failed: ` and the failure's class, never a
  /// path, an SQLite message, a vault's detail or a value; nil for a
  /// failure of the database itself (busy, damaged, full, a file), which
  /// rolls the whole transaction back and leaves no receipt, as a failed
  /// write cannot be trusted to record one.
  static func summary(for error: TaskerError) -> String? {
    switch error {
    case .notFound(let kind, _): return "failed: no such \(kind.rawValue)"
    case .invalidValue: return "failed: a refused value"
    case .vaultLocked: return "failed: the vault is locked"
    case .vault, .vaultNotFound, .noVaultLocation: return "failed: the vault could not be used"
    case .sealedBodyUnreadable, .sealingFailed, .noteKeyChanged: return "failed: a note could not be sealed or opened"
    case .attachment, .attachmentRefused, .attachmentNotFetched: return "failed: an attachment was refused"
    case .databaseNotFound, .notADatabase, .databaseTooNew, .damagedDatabase, .databaseBusy, .database, .system,
      .fileAccess, .protectionSettingsUnreadable, .receiptInvalid, .receiptsTampered, .receiptHeadKeyUnusable,
      .rangeNotSatisfiable,
      .approvalInvalid, .receiptNotFound, .notUndoable, .alreadyUndone, .approvalQueueFull, .outputExists:
      return nil
    }
  }

  /// Rule 6's target of a failed call: the ran-target form of the one
  /// task it named (`task/<id>`), else empty.
  static func target(of call: GateCall) -> String {
    switch call {
    case .completeTask(let id), .deleteTask(let id): return "task/\(id)"
    case .editTasks(let ids, _) where ids.count == 1: return "task/\(ids[0])"
    default: return ""
    }
  }

  /// Runs an acting call in the caller's decision transaction and writes
  /// its receipt: the outcome's when it ran (a delete writes its own), a
  /// `failed` one when the store refused it, whose change is then rolled
  /// back.
  ///
  /// - Parameters:
  ///   - receipt: the receipt of a run with this decision, target and
  ///     undo still to fill in; its decision becomes `failed` on failure,
  ///     with no undo and no approval.
  /// - Returns: the outcome and its receipt, or the failure and the
  ///   `failed` receipt.
  /// - Throws: a failure of the database itself (nothing is written), `TaskerError.database`.
  static func run(
    _ call: GateCall, store: TaskStore, receipt: GateReceipt, _ body: () throws -> GateExecutor.Outcome
  ) throws -> Result<(GateExecutor.Outcome, GateReceipt), Failed> {
    switch try store.attempt(body) {
    case .success(let outcome):
      if let written = outcome.receipt { return .success((outcome, written)) }
      var stored = receipt
      stored.summary = outcome.summary
      stored.target = outcome.target
      stored.undo = outcome.undo
      return .success((outcome, try store.appendReceipt(stored)))
    case .failure(let error):
      guard let summary = summary(for: error) else { throw error }
      var stored = receipt
      stored.decision = .failed
      stored.summary = receipt.approval.map { "\(summary) (approval #\($0))" } ?? summary
      stored.target = target(of: call)
      stored.undo = nil
      stored.approval = nil
      return .failure(Failed(error: error, receipt: try store.appendReceipt(stored)))
    }
  }

  /// A call that failed, and its `failed` receipt.
  struct Failed: Error {
    let error: TaskerError
    let receipt: GateReceipt
  }
}
