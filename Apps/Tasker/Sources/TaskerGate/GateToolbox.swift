import AssistantKeys
import CommandKit
import FoundationEssentials
import TaskVault
import TaskerCore

/// The gate's tools over the user's store, for one caller: every call is
/// parsed, decided by `GateDecision.decide`, then run, queued or refused,
/// and every acting call leaves a receipt in the same transaction.
public final class GateToolbox: AssistantToolProvider {
  /// An assistant's daily budget when no setting names one: 100 actions.
  public static let defaultBudget = GateBudgetKind.actions.defaultValue
  /// The largest budget a setting may hold: 100,000.
  public static let maximumBudget = GateBudgetKind.actions.maximum

  /// The caller: trusted mode, or the assistant its key verified as.
  public var identity: GateIdentity {
    didSet { caller = .assistant(identity.trust) }
  }
  var caller: GateCaller
  /// Where each call's store comes from: lent for the length of one call.
  let stores: GateStorePool
  /// The store lent to the call running now, with its remembered answers
  /// (set by `callTool` alone).
  private var leased: GateReadMemo?
  /// The store of the call running now; only called inside `callTool`.
  var store: TaskStore {
    guard let leased else { preconditionFailure("the gate's store is lent only while a call runs") }
    return leased.store
  }
  let clock: () -> Date
  let calendar: Calendar
  /// The current day's bounds in `calendar`, seconds since 1970 (`window(of:)`).
  var day: (start: Int64, end: Int64, today: CalendarDate)?
  /// Trusted mode's check that the vault is still unlocked, asked before
  /// every call that reads or seals a note (an assistant's key is checked
  /// against the vault on every message by the authenticator instead).
  private var vaultCheck: GateVaultCheck?
  /// The registry's record of the keys a rotated key replaced.
  var lineage: GateKeyLineage?

  /// The tools of trusted mode (stdio, no key): the user's own process.
  ///
  /// - Parameters:
  ///   - store: the user's store.
  ///   - clock: the time source (tests choose it).
  ///   - calendar: the calendar with the user's time zone.
  ///   - vaultDirectory: the vault the store's note keys come from (the
  ///     one TaskKey uses, from the environment); while it is locked every
  ///     call that would read or seal a note is refused, on the next
  ///     message after `taskkey lock`. Nil, or a directory without a vault,
  ///     checks nothing.
  public static func trusted(
    store: TaskStore, clock: @escaping () -> Date = Date.init, calendar: Calendar = .current,
    vaultDirectory: String? = Vault.defaultDirectory(environment: ProcessInfo.processInfo.environment)
  ) -> GateToolbox {
    let toolbox = GateToolbox(
      store: store, identity: GateIdentity(keyID: nil, name: "", trust: .elevated, grants: []), clock: clock,
      calendar: calendar)
    toolbox.caller = .trusted
    toolbox.vaultCheck = vaultDirectory.map(GateVaultCheck.init(directory:))
    return toolbox
  }

  /// The tools of an assistant whose key verified, each call on a store
  /// lent by `stores` (the HTTP gate: sessions on several threads at once).
  ///
  /// - Parameters:
  ///   - stores: the pool of the user's store's connections.
  ///   - identity: the key's identity.
  ///   - clock: the time source (tests choose it).
  ///   - calendar: the calendar with the user's time zone.
  ///   - vaultDirectory: as in `init(store:identity:clock:calendar:vaultDirectory:)`.
  public init(
    stores: GateStorePool, identity: GateIdentity, clock: @escaping () -> Date = Date.init,
    calendar: Calendar = .current,
    vaultDirectory: String? = Vault.defaultDirectory(environment: ProcessInfo.processInfo.environment)
  ) {
    self.stores = stores
    self.identity = identity
    self.caller = .assistant(identity.trust)
    self.clock = clock
    self.calendar = calendar
    self.lineage = vaultDirectory.map(GateKeyLineage.init(directory:))
  }

  /// The tools this caller may call, for `tools/list`: in trusted mode
  /// every tool, for an assistant only those whose grant its key holds
  /// (`GateTools.catalog(for:)`).
  public var tools: [MCPTool] {
    caller == .trusted ? GateTools.catalog : GateTools.catalog(for: identity.grants)
  }

  /// Parses, decides and runs, queues or refuses one call.
  ///
  /// - Returns: the tool's result; a queued call returns `status: queued`
  ///   with its approval number; a store failure (no such task, a locked
  ///   vault for note text) is a result with `isError`.
  /// - Throws: `MCPError` -32602 for an unknown tool or bad arguments,
  ///   -32003 (`insufficientScopeCode`) for a missing grant, -32001
  ///   (`refusedCode`) for an exhausted or undecidable budget.
  public func callTool(name: String, arguments: [String: JSONValue]) throws(MCPError) -> MCPToolResult {
    let call = try GateCall.parse(tool: name, arguments: arguments)
    do {
      return try stores.lend { lent in
        leased = lent
        defer { leased = nil }
        return try run(call, arguments: arguments)
      }
    } catch let error as MCPError {
      throw error
    } catch let error as TaskerError {
      let message = Self.assistantMessage(for: error)
      return MCPToolResult(content: ["error": .string(message)], summary: message, isError: true)
    } catch {
      throw MCPError(code: MCPError.internalErrorCode, message: "the gate failed: \(type(of: error))")
    }
  }

  /// One parsed call on the lent store: admitted, decided, run.
  private func run(_ call: GateCall, arguments: [String: JSONValue]) throws -> MCPToolResult {
    // An acting call checks the vault when it runs (`allow`), so a
    // locked vault leaves its `failed` receipt.
    if call.touchesNotes, !call.action.acts, let vaultCheck { try vaultCheck.requireUnlocked() }
    // A read is admitted from a block of reads reserved earlier, or by
    // reserving one in a short write transaction of its own (`admitRead`),
    // then runs outside it.
    if !call.action.acts, let refused = try admitRead(call) { throw refused }
    // An acting call is decided inside the write transaction that runs
    // it (BEGIN IMMEDIATE takes the write lock first): the day's count,
    // the check, the run and the receipt see one state of the store, so
    // no number of gates, processes or servers exceeds a budget.
    let settled: Settled =
      call.action.acts
      ? try stores.writing {
        try store.inOneTransaction {
          try foldClosedWindows()
          return try settle(call, arguments: arguments)
        }
      }
      : try settle(call, arguments: arguments)
    switch settled {
    case .result(let result): return result
    case .refused(let reason): throw Self.error(for: reason)
    case .queueFull(let error): throw error
    }
  }

  /// What a decided call came to: a result, or a refusal (its receipt is
  /// written in the transaction, so the error is thrown after the commit).
  private enum Settled {
    case result(MCPToolResult)
    case refused(RefuseReason)
    /// Asked, but the key's approval queue is at a cap: refused, with a receipt.
    case queueFull(MCPError)
  }

  /// Decides a call and runs, queues or refuses it; for an acting call the
  /// caller holds the write transaction this reads the budget in.
  private func settle(_ call: GateCall, arguments: [String: JSONValue]) throws -> Settled {
    let action = call.action
    let weighed = caller != .trusted && action.acts
    let decision = GateDecision.decide(
      caller: caller, action: action, grants: identity.grants, budget: weighed ? budgetState() : .available,
      quiet: weighed ? quietState() : .outside)
    switch decision {
    case .allow:
      return .result(try allow(call))
    case .ask(let reason):
      do {
        return .result(try ask(call, arguments: .object(arguments), reason: reason))
      } catch let error as TaskerError {
        // The caps are counted by the ledger in this write transaction, which
        // queued nothing; the refusal leaves its receipt here.
        guard case .approvalQueueFull(let cap, let limit) = error else { throw error }
        let full = MCPError(
          code: MCPError.refusedCode, message: error.description,
          data: ["cap": .string(cap), "limit": .integer(Int64(limit))])
        try recordRefusal(tool: call.tool, .queueFull, summary: "refused: " + full.message)
        return .queueFull(full)
      }
    case .refuse(let reason):
      if action.acts { try recordRefusal(tool: call.tool, reason.receiptRefusal, summary: "refused") }
      return .refused(reason)
    }
  }

  private func allow(_ call: GateCall) throws -> MCPToolResult {
    var executor = GateExecutor(
      store: store, today: today(at: clock()), author: author(.allow))
    executor.mayReadContexts = caller == .trusted || identity.grants.contains(.notesRead)
    guard call.action.acts else {
      let run = { [executor] in
        let outcome = try executor.run(call)
        return MCPToolResult(content: outcome.content, summary: outcome.summary)
      }
      guard let key = Self.memoKey(call, mayReadContexts: executor.mayReadContexts, today: executor.today) else {
        return try run()
      }
      guard let leased else { preconditionFailure("the gate's store is lent only while a call runs") }
      return try leased.answer(key, run: run)
    }
    // A failure in the store rolls the run back and leaves a `failed`
    // receipt in this same transaction (GateFailure).
    let ran = try store.inOneTransaction {
      try GateFailure.run(call, store: store, receipt: receipt(tool: call.tool, decision: .allow, summary: "")) {
        if call.touchesNotes { try vaultCheck?.requireUnlocked() }
        return try executor.run(call)
      }
    }
    switch ran {
    case .success(let (outcome, written)):
      return MCPToolResult(content: Self.withReceipt(outcome.content, written.id), summary: outcome.summary)
    case .failure(let failed):
      let message = Self.assistantMessage(for: failed.error)
      return MCPToolResult(
        content: ["error": .string(message), "receipt": .string("r\(failed.receipt.id)")], summary: message,
        isError: true)
    }
  }

  private func ask(_ call: GateCall, arguments: JSONValue, reason: AskReason) throws -> MCPToolResult {
    // Only an assistant is asked (trusted mode is always allowed); without a key nothing is queued.
    guard let keyID = identity.keyID else {
      throw MCPError(code: MCPError.internalErrorCode, message: "the gate failed: a call without a key was asked about")
    }
    return try store.inOneTransaction {
      let summary = GateDesk.describe(call, store: store)
      let approval = try store.enqueueApproval(
        keyID: keyID, assistant: identity.name, tool: call.tool, arguments: arguments.text, reason: reason,
        summary: summary)
      var stored = receipt(tool: call.tool, decision: .ask(reason), summary: "queued: " + summary)
      stored.target = "approval/\(approval.id)"
      stored.approval = approval.id
      let written = try store.appendReceipt(stored)
      let text = "queued for the user's approval as #\(approval.id) (\(reason.rawValue)); nothing was changed yet"
      return MCPToolResult(
        content: [
          "status": "queued", "approval": .integer(approval.id), "reason": .string(reason.rawValue),
          "receipt": .string("r\(written.id)"),
        ], summary: text)
    }
  }

  /// The caller as the author of an undoable change's receipt.
  func author(_ decision: ReceiptDecision) -> ReceiptAuthor {
    let isAssistant = caller != .trusted
    return ReceiptAuthor(
      actor: isAssistant ? .assistant : .trusted, keyID: isAssistant ? identity.keyID : nil,
      assistant: isAssistant ? identity.name : nil, decision: decision)
  }

  func receipt(tool: GateTool, decision: ReceiptDecision, summary: String) -> GateReceipt {
    let isAssistant = caller != .trusted
    return GateReceipt(
      actor: isAssistant ? .assistant : .trusted, keyID: isAssistant ? identity.keyID : nil,
      assistant: isAssistant ? identity.name : nil, tool: tool, decision: decision, target: "",
      summary: summary)
  }

  private static func withReceipt(_ content: JSONValue, _ id: Int64) -> JSONValue {
    guard case .object(var members) = content else { return content }
    members["receipt"] = .string("r\(id)")
    return .object(members)
  }

  /// What an assistant is told of a store failure: the failures about its
  /// own call in full (no such task, a bad value, a locked vault), every
  /// other one as a generic sentence. Never a path, an SQLite message or a
  /// vault's detail: those are for the user, on the command line.
  public static func assistantMessage(for error: TaskerError) -> String {
    switch error {
    case .notFound, .invalidValue, .vaultLocked, .receiptNotFound, .notUndoable, .alreadyUndone:
      return error.description
    case .databaseBusy:
      return "the user's store is busy with another Tasker process; try again"
    case .sealedBodyUnreadable, .noteKeyChanged, .sealingFailed, .vault, .vaultNotFound, .noVaultLocation:
      return "the note could not be opened or sealed on this device; the user can run 'tasker doctor'"
    default:
      return "the user's store could not complete the call; the user can run 'tasker doctor'"
    }
  }

  private static func error(for reason: RefuseReason) -> MCPError {
    switch reason {
    case .missingGrant(let grant):
      return MCPError(
        code: MCPError.insufficientScopeCode,
        message:
          "this key lacks the '\(grant.rawValue)' grant this call needs; mint a key with --grant \(grant.rawValue)",
        data: ["scope": .string(grant.rawValue)])
    case .budgetExhausted:
      return MCPError(
        code: MCPError.refusedCode, message: "refused: this key's budget of actions for today is used up")
    case .budgetUndecidable:
      return MCPError(
        code: MCPError.refusedCode, message: "refused: this key's budget could not be checked (damaged setting)")
    }
  }

  // MARK: - Budget and quiet hours

  /// The key's budget state now; `unknown` when a setting is damaged or
  /// the count cannot be read.
  func budgetState() -> BudgetState {
    guard let keyID = identity.keyID else { return .unknown }
    do {
      let limit = try Self.budget(store: store, keyID: keyID) {
        try lineage?.earlierKeys(of: keyID, name: identity.name) ?? []
      }
      guard let limit else { return .unknown }
      return try store.actionCount(keyID: keyID, since: dayStart(at: clock())) < limit ? .available : .exhausted
    } catch {
      return .unknown
    }
  }

  /// The key's daily budget of actions (`GateBudgetKind.budget`).
  static func budget(
    store: TaskStore, keyID: AssistantKeyID, earlier: () throws -> [AssistantKeyID] = { [] }
  ) throws -> Int? {
    try GateBudgetKind.actions.budget(store: store, keyID: keyID, earlier: earlier)
  }

  /// The quiet-hours state now; `unknown` when the setting is damaged.
  func quietState() -> QuietState {
    do {
      guard let text = try store.gateSetting("quiet-hours") else { return .outside }
      return try QuietHours(text).contains(clock(), calendar: calendar) ? .inside : .outside
    } catch {
      return .unknown
    }
  }
}

/// Whether the vault is still unlocked, answered cheaply: a full read of
/// the unlock state once (`Vault.unlockStamp()`, about a millisecond),
/// then a few `lstat` calls per question (`isStillUnlocked(since:)`) until
/// something changes, when the full state is read again.
final class GateVaultCheck {
  private let directory: String
  private var opened: Vault?
  private var stamp: UnlockStamp?

  init(directory: String) {
    self.directory = directory
  }

  /// Returns when the vault is unlocked, or when there is no vault there
  /// (a store with encryption off and no vault has no note key to lock).
  ///
  /// - Throws: `TaskerError.vaultLocked` when it is locked; `.vault` when
  ///   its state cannot be read (fail closed).
  func requireUnlocked() throws {
    do {
      let vault = try opened ?? Vault(at: directory)
      opened = vault
      if let stamp, vault.isStillUnlocked(since: stamp) { return }
      stamp = nil
      stamp = try vault.unlockStamp()
    } catch TaskVaultError.notInitialised {
      return
    } catch let error as TaskVaultError {
      throw TaskerError.vault(error)
    }
    guard stamp != nil else { throw TaskerError.vaultLocked(reason: .notUnlocked) }
  }
}

/// The keys an assistant's key replaced, from the key registry in the
/// vault (authority, unlike the database): the assistant's other keys
/// minted before it (or in the same second) and no longer active — revoked
/// by a rotation, in its overlap window, or expired — newest first. Read once per key id (earlier keys
/// never change), on the first budget check without the key's own setting.
final class GateKeyLineage {
  private let directory: String
  private var known: [AssistantKeyID: [AssistantKeyID]] = [:]

  init(directory: String) {
    self.directory = directory
  }

  /// The assistant's keys minted before `keyID`, newest first; none when
  /// there is no vault there.
  ///
  /// - Throws: the vault's or the registry's errors (the budget is then
  ///   undecidable and the call refused).
  func earlierKeys(of keyID: AssistantKeyID, name: String) throws -> [AssistantKeyID] {
    if let earlier = known[keyID] { return earlier }
    let vault: Vault
    do {
      vault = try Vault(at: directory)
    } catch TaskVaultError.notInitialised {
      return []
    }
    let earlier = Self.earlier(of: keyID, name: name, among: try AssistantKeyRegistry(vault: vault).keys())
    known[keyID] = earlier
    return earlier
  }

  /// The keys of `records` that `keyID` replaced, newest first: the rule
  /// above over a registry already read.
  static func earlier(of keyID: AssistantKeyID, name: String, among records: [AssistantKeyRecord])
    -> [AssistantKeyID]
  {
    guard let this = records.first(where: { $0.id == keyID }) else { return [] }
    return
      records
      .filter { $0.name == name && $0.id != keyID && $0.created <= this.created && $0.status != .active }
      .sorted { ($0.created, $0.id) > ($1.created, $1.id) }
      .map(\.id)
  }
}
