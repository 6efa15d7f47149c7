import AssistantKeys
import CommandKit
import FoundationEssentials
import TaskVault
import TaskerCore
import TaskerGate

/// `tasker approvals list|approve|deny`: the queue of assistant calls that
/// wait for the user.
struct ApprovalsCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "approvals", abstract: "List, approve or deny assistant calls that wait for your approval.",
    example: """
      tasker approvals list
      tasker approvals approve 4 5
      tasker approvals deny --all-from planner
      """)
  static let subcommands: [any CommandDeclaration.Type] = [
    ApprovalsListCommand.self, ApprovalsApproveCommand.self, ApprovalsDenyCommand.self,
  ]

  /// The approvals' ids, `ID...`.
  static let ids = ArgumentSpec(
    name: "ID", kind: .approvalID, help: "The approvals' ids ('tasker approvals list'), decided in the order given.",
    optional: true, repeating: true)

  /// `--all-from KEYID`.
  static let allFrom = OptionSpec.value(
    "--all-from", "KEYID", .text,
    help: "Every waiting call of one key, oldest first: its id (tkid_ and 16 hex digits) or its assistant's name "
      + "(the name's current key; 'taskkey list' shows both).")

  /// An approval in the project's JSON: id as a string, time in RFC 3339.
  static func json(_ approval: GateApproval) -> JSONValue {
    guard case .object(var members) = GateReceiptFormat.json(approval) else { return .null }
    members["id"] = RecordJSON.id(approval.id)
    members["at"] = TimeStamp.json(seconds: approval.at)
    return .object(members)
  }
}

/// `tasker approvals list`.
struct ApprovalsListCommand: Command {
  static let all = OptionSpec.flag("--all", help: "Include approved and denied calls.")
  static let spec = CommandSpec(
    name: "list",
    abstract: "The calls waiting (with --all, also those decided), each with the full change it asks for.",
    options: [all],
    json: JSONShape(
      fields: ["approvals"],
      help: "approvals, each with id, at, key_id, assistant, tool, reason, summary, status and change (records, "
        + "each with action, task_id and fields of name, current and requested; unreadable)."),
    discussion: "Under each waiting call's row, one line per field of each record it touches: the action, the "
      + "field, its value now and the value asked for. Note text and page bodies show as their size, then in full, "
      + "each of their lines indented after '| '; every value a user or an assistant wrote is printed with its control characters made visible.",
    example: "tasker approvals list --all")

  let everything: Bool
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    everything = arguments.flag(Self.all)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    guard let store = try context.readerIfPresent() else {
      if json { return try context.printJSON(.object(["approvals": .array([])])) }
      return
    }
    let approvals = try store.approvals(pendingOnly: !everything)
    func change(_ approval: GateApproval) -> ApprovalChange? {
      guard approval.status == .pending else { return nil }
      return ApprovalChange.of(approval, store: store) { id in
        try store.approval(id: id)?.arguments ?? ""
      }
    }
    if json {
      let rows = approvals.map { approval -> JSONValue in
        guard case .object(var members) = ApprovalsCommand.json(approval) else { return .null }
        members["change"] = change(approval)?.json ?? .null
        return .object(members)
      }
      return try context.printJSON(.object(["approvals": .array(rows)]))
    }
    for approval in approvals {
      let fields = [
        approval.status.rawValue, approval.tool.rawValue, "\(approval.assistant) (\(approval.keyID))",
        approval.reason.rawValue, approval.summary,
      ]
      try context.print("#\(approval.id)\t" + fields.map { TerminalText.visible($0) }.joined(separator: "\t"))
      for line in change(approval)?.lines ?? [] { try context.print(line) }
    }
  }
}

/// What `approve` and `deny` share: the ids to decide, in turn.
struct ApprovalBatch {
  /// The ids given, or nil when `--all-from` was.
  let ids: [Int64]?
  /// The key `--all-from` named, as given.
  let allFrom: String?

  init(_ arguments: ParsedArguments) throws {
    let words = arguments.positionals
    allFrom = arguments.value(ApprovalsCommand.allFrom)
    guard words.isEmpty != (allFrom == nil) else {
      throw arguments.usageError("give the approvals' ids or --all-from KEYID, not both and not neither")
    }
    if allFrom != nil {
      ids = nil
      return
    }
    var seen = Set<Int64>()
    ids = try words.map { word in
      guard let id = ParsedArguments.recordID(word) else {
        throw arguments.usageError("ID must be a positive whole number, not '\(word)'")
      }
      guard seen.insert(id).inserted else { throw arguments.usageError("#\(id) is given more than once") }
      return id
    }
  }

  /// The ids to decide: those given, or every waiting approval of the key
  /// `--all-from` names, oldest first.
  func resolve(_ store: TaskStore, environment: [String: String]) throws -> [Int64] {
    if let ids { return ids }
    let keyID = try AssistantKeyNames.resolve(allFrom!, option: "--all-from") {
      try AssistantKeyNames.records(environment: environment)
    }
    return try store.approvals(pendingOnly: true).filter { $0.keyID == keyID }.map(\.id)
  }

  /// Decides each id in turn with `decide`; the first failure stops the
  /// batch. With one id its error is thrown as it is; with several it is
  /// wrapped so the message names the ids decided before it.
  /// The `--json` object of a decided batch: `decided` (each call's
  /// approval, receipt and, with `summaries`, what ran), and the single-id
  /// fields, filled only when exactly one call was decided (else null).
  static func json(_ done: [(Int64, GateReceipt)], summaries: Bool) -> JSONValue {
    func members(_ id: Int64?, _ receipt: GateReceipt?) -> [String: JSONValue] {
      var members: [String: JSONValue] = [
        "approval": RecordJSON.id(id), "receipt": receipt.map { .string("r\($0.id)") } ?? .null,
      ]
      if summaries { members["summary"] = .optional(receipt?.summary) }
      return members
    }
    let one = done.count == 1 ? done[0] : nil
    var object = members(one?.0, one?.1)
    object["decided"] = .array(done.map { .object(members($0.0, $0.1)) })
    return .object(object)
  }

  func run<Result>(_ ids: [Int64], _ decide: (Int64) throws -> Result) throws -> [(Int64, Result)] {
    var done = [(Int64, Result)]()
    for (index, id) in ids.enumerated() {
      do {
        done.append((id, try decide(id)))
      } catch {
        guard ids.count > 1 else { throw error }
        throw CLIError.approvalsStopped(
          id: id, cause: FailureReport(error), decided: done.map(\.0), untried: Array(ids[(index + 1)...]))
      }
    }
    return done
  }
}

/// `tasker approvals approve ID... | --all-from KEYID`.
struct ApprovalsApproveCommand: Command {
  static let spec = CommandSpec(
    name: "approve",
    abstract: "Run the calls now, in turn, as the assistant that asked; refused when its key was revoked or "
      + "expired since. The first that fails stops the rest.",
    arguments: [ApprovalsCommand.ids], options: [ApprovalsCommand.allFrom],
    json: JSONShape(
      fields: ["approval", "receipt", "summary", "decided"],
      help: "with one call decided, its approval, receipt and what ran (else nulls); decided: every call run, "
        + "each with approval, receipt and summary."),
    example: """
      tasker approvals approve 4
      tasker approvals approve 4 5 6
      tasker approvals approve --all-from planner
      """)

  let batch: ApprovalBatch
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    batch = try ApprovalBatch(arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store()
    let ids = try batch.resolve(store, environment: context.environment)
    let authenticator = GateAuthenticator(vaultDirectory: Vault.defaultDirectory(environment: context.environment))
    let desk = GateDesk(store: store)
    let done = try batch.run(ids) { try desk.approve($0, checkKey: authenticator.checkStillValid) }
    if json { return try context.printJSON(ApprovalBatch.json(done, summaries: true)) }
    if done.isEmpty { try context.print("No call of \(TerminalText.visible(batch.allFrom ?? "")) is waiting.") }
    for (id, receipt) in done {
      try context.print(
        "Approved #\(id) and ran it: \(TerminalText.visible(receipt.summary)) (receipt r\(receipt.id)).")
    }
  }
}

/// `tasker approvals deny ID... | --all-from KEYID`.
struct ApprovalsDenyCommand: Command {
  static let spec = CommandSpec(
    name: "deny", abstract: "Drop the calls, in turn; they never run. The first that fails stops the rest.",
    arguments: [ApprovalsCommand.ids], options: [ApprovalsCommand.allFrom],
    json: JSONShape(
      fields: ["approval", "receipt", "decided"],
      help: "with one call decided, its approval and receipt (else nulls); decided: every call denied, each with "
        + "approval and receipt."),
    example: """
      tasker approvals deny 4
      tasker approvals deny --all-from tkid_0123456789abcdef
      """)

  let batch: ApprovalBatch
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    batch = try ApprovalBatch(arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store()
    let ids = try batch.resolve(store, environment: context.environment)
    let desk = GateDesk(store: store)
    let done = try batch.run(ids) { try desk.deny($0) }
    if json { return try context.printJSON(ApprovalBatch.json(done, summaries: false)) }
    if done.isEmpty { try context.print("No call of \(TerminalText.visible(batch.allFrom ?? "")) is waiting.") }
    for (id, receipt) in done { try context.print("Denied #\(id) (receipt r\(receipt.id)).") }
  }
}
