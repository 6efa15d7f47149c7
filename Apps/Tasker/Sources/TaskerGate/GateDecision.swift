import AssistantKeys
import TaskerCore

/// Who is calling the gate.
public enum GateCaller: Equatable, Hashable, Sendable {
  /// The user's own local process on stdio with no key: trusted mode.
  /// Never reachable over HTTP.
  case trusted
  /// An assistant whose key verified, at its trust level.
  case assistant(TrustLevel)

  /// Every caller, for tests that enumerate the decision table.
  public static let all: [GateCaller] = [.trusted] + TrustLevel.allCases.map { .assistant($0) }
}

/// What a tool call would do, as far as the decision cares.
public enum GateAction: String, CaseIterable, Sendable {
  /// List or search tasks, or show one, without note text.
  case readTasks
  /// Read note text (in a task listing or a note itself).
  case readNotes
  /// Add a task.
  case addTask
  /// Edit one task.
  case editTask
  /// Edit more than one task in one call.
  case bulkEdit
  /// Mark a task done.
  case completeTask
  /// Delete a task.
  case deleteTask
  /// Add a page.
  case addPage

  /// True for every action that changes the user's data.
  public var acts: Bool { self != .readTasks && self != .readNotes }

  /// The capability grant an assistant's key must hold for this action,
  /// or nil when any valid key may do it.
  public var requiredGrant: GateGrant? {
    switch self {
    case .readTasks: return nil
    case .readNotes: return .notesRead
    case .addTask, .editTask, .bulkEdit, .completeTask, .deleteTask: return .tasksWrite
    case .addPage: return .pagesWrite
    }
  }
}

/// The capability grants the gate knows, as written in a key's record
/// (`taskkey mint --grant`).
public enum GateGrant: String, CaseIterable, Sendable {
  /// Read note text and page bodies.
  case notesRead = "notes:read"
  /// Add, edit, complete and delete tasks.
  case tasksWrite = "tasks:write"
  /// Add pages.
  case pagesWrite = "pages:write"
}

/// Whether the key's daily budget of actions has room left.
public enum BudgetState: CaseIterable, Sendable {
  /// At least one more action fits today.
  case available
  /// The budget for today is used up.
  case exhausted
  /// The count or the budget could not be read.
  case unknown
}

/// Whether the current time falls in the user's quiet hours.
public enum QuietState: CaseIterable, Sendable {
  /// Outside quiet hours, or none are set.
  case outside
  /// Inside quiet hours.
  case inside
  /// The setting could not be read or is damaged.
  case unknown
}

// Why a call waits (`AskReason`) is TaskerCore's: a receipt stores it.

/// Why a call is refused.
public enum RefuseReason: Equatable, Sendable {
  /// The key lacks the grant the action needs.
  case missingGrant(GateGrant)
  /// The key's budget for today is used up.
  case budgetExhausted
  /// Whether the budget has room could not be decided.
  case budgetUndecidable

  /// The refusal as a receipt records it.
  public var receiptRefusal: ReceiptRefusal {
    switch self {
    case .missingGrant(let grant): return .missingGrant(grant.rawValue)
    case .budgetExhausted: return .budgetExhausted
    case .budgetUndecidable: return .budgetUndecidable
    }
  }

  /// A short stable word for receipts and listings.
  public var word: String { receiptRefusal.rawValue }
}

/// The gate's answer to one call: a value, computed by `GateDecision.decide`.
public enum GateDecision: Equatable, Sendable {
  /// Run the call now.
  case allow
  /// Queue the call for the user's approval; it is not run.
  case ask(AskReason)
  /// Refuse the call; nothing is run or queued.
  case refuse(RefuseReason)

  /// Decides one call. A pure function of its inputs, with no other
  /// outcome than the three cases; tests enumerate every combination.
  ///
  /// The rules, in order:
  /// 1. Trusted mode (stdio, no key) is the user: allow.
  /// 2. A key without the action's grant: refuse (missing grant).
  /// 3. Reading tasks (and, with the grant, notes): allow.
  /// 4. An acting call over budget: refuse; budget undecidable: refuse.
  /// 5. An acting call in quiet hours, or when that is undecidable: ask.
  /// 6. A risky action for the trust level: ask. Restricted marks every
  ///    action risky; standard marks delete and bulk edit; elevated marks
  ///    delete.
  /// 7. Otherwise: allow.
  ///
  /// - Parameters:
  ///   - caller: trusted mode or an assistant's trust level.
  ///   - action: what the call would do.
  ///   - grants: the key's grants (ignored in trusted mode).
  ///   - budget: the key's budget state today.
  ///   - quiet: the quiet-hours state now.
  /// - Returns: allow, ask with a reason, or refuse with a reason.
  public static func decide(
    caller: GateCaller, action: GateAction, grants: Set<GateGrant>, budget: BudgetState, quiet: QuietState
  ) -> GateDecision {
    guard case .assistant(let trust) = caller else { return .allow }
    if let needed = action.requiredGrant, !grants.contains(needed) { return .refuse(.missingGrant(needed)) }
    guard action.acts else { return .allow }
    switch budget {
    case .available: break
    case .exhausted: return .refuse(.budgetExhausted)
    case .unknown: return .refuse(.budgetUndecidable)
    }
    switch quiet {
    case .outside: break
    case .inside: return .ask(.quietHours)
    case .unknown: return .ask(.quietHoursUndecidable)
    }
    return isRisky(action, for: trust) ? .ask(.risky) : .allow
  }

  /// Whether a trust level marks an acting call risky.
  ///
  /// - Parameters:
  ///   - action: an action.
  ///   - trust: the key's trust level.
  /// - Returns: true when the action must wait for approval at that level.
  public static func isRisky(_ action: GateAction, for trust: TrustLevel) -> Bool {
    guard action.acts else { return false }
    switch trust {
    case .restricted: return true
    case .standard: return action == .deleteTask || action == .bulkEdit
    case .elevated: return action == .deleteTask
    }
  }

  /// The decision as a receipt records it.
  public var receiptDecision: ReceiptDecision {
    switch self {
    case .allow: return .allow
    case .ask(let reason): return .ask(reason)
    case .refuse(let reason): return .refuse(reason.receiptRefusal)
    }
  }

  /// A short stable word for receipts and listings: `allow`, `ask:<reason>`
  /// or `refuse:<reason>`.
  public var word: String { receiptDecision.rawValue }
}

extension GateGrant {
  /// The gate grants among a key's grants; grants the gate does not know
  /// are ignored (they grant nothing here).
  ///
  /// - Parameter grants: the grants of a key's record.
  /// - Returns: the known ones.
  public static func known(in grants: [String]) -> Set<GateGrant> {
    Set(grants.compactMap(GateGrant.init(rawValue:)))
  }
}
