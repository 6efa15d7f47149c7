import AssistantKeys
import CommandKit
import FoundationEssentials
import TaskerCore

/// The user's side of the gate: approve or deny queued calls, and undo an
/// addition, a completion or a delete (the user's or an assistant's) from
/// its receipt. Each leaves a receipt of
/// its own, in the same transaction as its change.
public struct GateDesk {
  /// Checks, at approval time, that the key that asked is still valid.
  public typealias KeyCheck = (AssistantKeyID) throws -> Void

  private let store: TaskStore
  private let clock: () -> Date
  private let calendar: Calendar

  /// Opens the desk over a store.
  ///
  /// - Parameters:
  ///   - store: the user's store.
  ///   - clock: the time source.
  ///   - calendar: the calendar with the user's time zone.
  public init(store: TaskStore, clock: @escaping () -> Date = Date.init, calendar: Calendar = .current) {
    self.store = store
    self.clock = clock
    self.calendar = calendar
  }

  /// Approves a pending call and runs it now, as the assistant that asked.
  ///
  /// - Parameters:
  ///   - id: the approval's number.
  ///   - checkKey: throws when the key that asked is no longer valid; the
  ///     approval then stays pending and nothing runs.
  /// - Returns: the receipt of the run.
  /// - Throws: `GateError.approvalNotFound`, `.approvalNotPending`,
  ///   `.keyNoLongerValid` (from `checkKey`), `.approvalUnreadable`, `.store`;
  ///   `.approvedCallFailed` when the call ran and the store refused it:
  ///   nothing changed, the approval is decided and a `failed` receipt says so.
  public func approve(_ id: Int64, checkKey: KeyCheck) throws -> GateReceipt {
    let approval = try pending(id)
    try checkKey(approval.keyID)
    guard case .object(let arguments)? = JSONValue.parse(Array(approval.arguments.utf8)) else {
      throw GateError.approvalUnreadable(id)
    }
    let call: GateCall
    do {
      call = try GateCall.parse(tool: approval.tool.rawValue, arguments: arguments)
    } catch {
      throw GateError.approvalUnreadable(id)
    }
    let author = ReceiptAuthor(
      actor: .assistant, keyID: approval.keyID, assistant: approval.assistant, decision: .approved, approval: id)
    let executor = GateExecutor(
      store: store, today: CalendarDate.today(now: clock(), timeZone: calendar.timeZone), author: author)
    let ran = try storeCall {
      try store.inOneTransaction {
        guard try store.resolveApproval(id: id, approved: true) else { throw GateError.approvalNotPending(id) }
        // A failure in the store rolls the run back and leaves a `failed`
        // receipt; the approval stays decided.
        return try GateFailure.run(
          call, store: store,
          receipt: GateReceipt(
            actor: .assistant, keyID: approval.keyID, assistant: approval.assistant, tool: call.tool,
            decision: .approved, target: "", summary: "", approval: id)
        ) { try executor.run(call) }
      }
    }
    switch ran {
    case .success(let (_, written)): return written
    case .failure(let failed): throw GateError.approvedCallFailed(id, receipt: failed.receipt.id, failed.error)
    }
  }

  /// Denies a pending call; it never runs. Its arguments are never opened
  /// (no key is needed, and a call sealed under a key this device no
  /// longer holds can still be denied) and are dropped.
  ///
  /// - Returns: the receipt of the denial.
  /// - Throws: `GateError.approvalNotFound`, `.approvalNotPending`, `.store`.
  public func deny(_ id: Int64) throws -> GateReceipt {
    let approval = try pending(id, openingArguments: false)
    return try storeCall {
      try store.inOneTransaction {
        guard try store.resolveApproval(id: id, approved: false) else { throw GateError.approvalNotPending(id) }
        return try store.appendReceipt(
          GateReceipt(
            actor: .user, keyID: nil, assistant: nil, tool: approval.tool, decision: .denied,
            target: "approval/\(id)", summary: "denied: " + approval.summary, approval: id))
      }
    }
  }

  /// Undoes what a receipt recorded (`TaskStore.undo(receipt:)`): deletes
  /// an added task or page, reopens a completed task, or puts back a task
  /// or page the user deleted, or the fields of an edit, from its kept copy.
  ///
  /// - Parameter id: the receipt's number.
  /// - Returns: the receipt of the undo.
  /// - Throws: `GateError.receiptNotFound`, `.notUndoable`,
  ///   `.alreadyUndone`, `.store` (for example when the task is gone, or
  ///   `TaskerError.receiptsTampered` when the receipt chain is broken).
  public func undo(_ id: Int64) throws -> GateReceipt {
    do {
      return try store.undo(receipt: id)
    } catch TaskerError.receiptNotFound(let id) {
      throw GateError.receiptNotFound(id)
    } catch TaskerError.notUndoable(let id, let reason) {
      throw GateError.notUndoable(id, reason: reason)
    } catch TaskerError.alreadyUndone(let id, let by) {
      throw GateError.alreadyUndone(id, by: by)
    } catch let error as TaskerError {
      throw GateError.store(error)
    }
  }

  private func pending(_ id: Int64, openingArguments: Bool = true) throws -> GateApproval {
    guard let approval = try storeCall({ try store.approval(id: id, openingArguments: openingArguments) }) else {
      throw GateError.approvalNotFound(id)
    }
    guard approval.status == .pending else { throw GateError.approvalNotPending(id) }
    return approval
  }

  private func storeCall<Result>(_ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch let error as TaskerError {
      throw GateError.store(error)
    }
  }

  /// A one-line description of a call for the approval queue: the tool,
  /// the task ids and titles, the names of changed fields; never note
  /// text or page bodies.
  static func describe(_ call: GateCall, store: TaskStore) -> String {
    func title(_ id: Int64) -> String {
      (try? store.task(id: id)).map { "task \(id) '\($0.title)'" } ?? "task \(id)"
    }
    switch call {
    case .addTask(let draft): return "add task '\(draft.title)'"
    case .editTasks(let ids, let changes):
      return "edit \(ids.map(title).joined(separator: ", ")): \(GateExecutor.fields(changes))"
    case .completeTask(let id): return "complete \(title(id))"
    case .deleteTask(let id): return "delete \(title(id))"
    case .addPage(let pageTitle, _): return "add page '\(pageTitle)'"
    case .listTasks, .searchTasks, .showTask, .readNote: return "read tasks"
    }
  }
}
