import AssistantKeys
import CommandKit
import FoundationEssentials
import TaskerCore

/// The gate's tools over the user's store, for one caller: every call is
/// parsed, decided by `GateDecision.decide`, then run, queued or refused,
/// and every acting call leaves a receipt in the same transaction.
public final class GateToolbox: AssistantToolProvider {
  /// An assistant's daily budget when no setting names one: 100 actions.
  public static let defaultBudget = 100
  /// The largest budget a setting may hold: 100,000.
  public static let maximumBudget = 100_000

  /// The caller: trusted mode, or the assistant its key verified as.
  public var identity: GateIdentity {
    didSet { caller = .assistant(identity.trust) }
  }
  private var caller: GateCaller
  private let store: TaskStore
  private let clock: () -> Date
  private let calendar: Calendar

  /// The tools of trusted mode (stdio, no key): the user's own process.
  ///
  /// - Parameters:
  ///   - store: the user's store.
  ///   - clock: the time source (tests choose it).
  ///   - calendar: the calendar with the user's time zone.
  public static func trusted(store: TaskStore, clock: @escaping () -> Date = Date.init, calendar: Calendar = .current)
    -> GateToolbox
  {
    let toolbox = GateToolbox(
      store: store, identity: GateIdentity(keyID: nil, name: "", trust: .elevated, grants: []), clock: clock,
      calendar: calendar)
    toolbox.caller = .trusted
    return toolbox
  }

  /// The tools of an assistant whose key verified.
  ///
  /// - Parameters:
  ///   - store: the user's store.
  ///   - identity: the key's identity.
  ///   - clock: the time source (tests choose it).
  ///   - calendar: the calendar with the user's time zone.
  public init(
    store: TaskStore, identity: GateIdentity, clock: @escaping () -> Date = Date.init, calendar: Calendar = .current
  ) {
    self.store = store
    self.identity = identity
    self.caller = .assistant(identity.trust)
    self.clock = clock
    self.calendar = calendar
  }

  /// Every tool of the gate.
  public var tools: [MCPTool] { GateTools.catalog }

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
    let action = call.action
    let weighed = caller != .trusted && action.acts
    let decision = GateDecision.decide(
      caller: caller, action: action, grants: identity.grants, budget: weighed ? budgetState() : .available,
      quiet: weighed ? quietState() : .outside)
    do {
      switch decision {
      case .allow:
        return try allow(call)
      case .ask(let reason):
        return try ask(call, arguments: .object(arguments), reason: reason)
      case .refuse(let reason):
        if action.acts { try store.appendReceipt(receipt(tool: call.tool, decision: decision, summary: "refused")) }
        throw Self.error(for: reason)
      }
    } catch let error as MCPError {
      throw error
    } catch let error as TaskerError {
      return MCPToolResult(content: ["error": .string(error.description)], summary: error.description, isError: true)
    } catch {
      throw MCPError(code: MCPError.internalErrorCode, message: "the gate failed: \(type(of: error))")
    }
  }

  private func allow(_ call: GateCall) throws -> MCPToolResult {
    let executor = GateExecutor(store: store, today: CalendarDate.today(now: clock(), timeZone: calendar.timeZone))
    guard call.action.acts else {
      let outcome = try executor.run(call)
      return MCPToolResult(content: outcome.content, summary: outcome.summary)
    }
    return try store.inOneTransaction {
      let outcome = try executor.run(call)
      var stored = receipt(tool: call.tool, decision: .allow, summary: outcome.summary)
      stored.target = outcome.target
      stored.undo = outcome.undo
      let written = try store.appendReceipt(stored)
      return MCPToolResult(content: Self.withReceipt(outcome.content, written.id), summary: outcome.summary)
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

  private func receipt(tool: GateTool, decision: GateDecision, summary: String) -> GateReceipt {
    let isAssistant = caller != .trusted
    return GateReceipt(
      actor: isAssistant ? .assistant : .trusted, keyID: isAssistant ? identity.keyID : nil,
      assistant: isAssistant ? identity.name : nil, tool: tool, decision: decision.receiptDecision, target: "",
      summary: summary)
  }

  private static func withReceipt(_ content: JSONValue, _ id: Int64) -> JSONValue {
    guard case .object(var members) = content else { return content }
    members["receipt"] = .string("r\(id)")
    return .object(members)
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
      let limit = try Self.budget(store: store, keyID: keyID)
      guard let limit else { return .unknown }
      let since = Int64(calendar.startOfDay(for: clock()).timeIntervalSince1970)
      return try store.actionCount(keyID: keyID, since: since) < limit ? .available : .exhausted
    } catch {
      return .unknown
    }
  }

  /// The key's daily budget: its own setting, else the default setting,
  /// else `defaultBudget`; nil when a setting is not a valid number.
  static func budget(store: TaskStore, keyID: AssistantKeyID) throws -> Int? {
    guard let text = try store.gateSetting("budget." + keyID.text) ?? store.gateSetting("budget.default") else {
      return defaultBudget
    }
    guard let value = Int(text), (0...maximumBudget).contains(value) else { return nil }
    return value
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
