import AssistantKeys
import CommandKit
import FoundationEssentials
import TaskSystem
import TaskVault
import TaskerCore
import TaskerGate

/// `tasker receipts`: what assistants (and trusted mode) did, newest first.
struct ReceiptsCommand: Command {
  static let limit = OptionSpec.value(
    "--limit", "N", .recordID, help: "The newest N receipts (default 50, at most 100000).")
  static let spec = CommandSpec(
    name: "receipts", abstract: "List the gate's receipts: who did what, when, and what the gate decided.",
    options: [limit, verifyOption],
    json: JSONShape(
      fields: ["receipts"],
      help: "receipts, newest first, each with id (rN), at, actor, key_id, assistant, tool, decision, target, "
        + "summary, undo, undoes, approval; with --verify, one field verification instead (docs/json-output.md)."),
    example: "tasker receipts --limit 10")

  let count: Int
  let json: Bool
  let verify: Bool

  init(_ arguments: ParsedArguments) throws {
    count = arguments.recordID(Self.limit).map { Int($0) } ?? 50
    guard count <= 100_000 else { throw arguments.usageError("--limit must be 1 to 100000") }
    json = arguments.flag(CommandSpec.jsonOption)
    verify = arguments.flag(Self.verifyOption)
  }

  /// A receipt in the project's JSON: the receipt format's members
  /// (docs/formats/receipt.md) with the id as `rN` and the time in RFC 3339.
  static func json(_ receipt: GateReceipt) -> JSONValue {
    guard case .object(var members) = GateReceiptFormat.json(receipt) else { return .null }
    members["version"] = nil
    members["receipt"] = nil
    members["id"] = .string("r\(receipt.id)")
    members["at"] = TimeStamp.json(seconds: receipt.at)
    members["approval"] = RecordJSON.id(receipt.approval)
    return .object(members)
  }

  func run(_ context: CommandContext) throws {
    try context.foldOpenTallies()
    if verify { return try runVerify(context) }
    let receipts = try context.readerIfPresent()?.receipts(limit: count) ?? []
    if json { return try context.printJSON(.object(["receipts": .array(receipts.map(Self.json))])) }
    for receipt in receipts {
      let who = receipt.keyID.map { "\(receipt.assistant ?? "?") (\($0))" } ?? receipt.actor.rawValue
      var line = "r\(receipt.id)\t\(TimeStamp.local(Double(receipt.at)))\t"
      line += [who, receipt.tool.rawValue, receipt.decision.rawValue, receipt.summary].map { TerminalText.visible($0) }
        .joined(separator: "\t")
      if receipt.undo != nil { line += "\t(undo: tasker undo r\(receipt.id))" }
      try context.print(line)
    }
  }
}

/// `tasker undo ID` reopens a done task; `tasker undo rN` undoes what
/// receipt N recorded (an addition, a completion, or a delete or edit
/// that kept a copy).
struct UndoCommand: Command {
  static let purge = OptionSpec.flag(
    "--purge",
    help: "Drop every kept copy of deleted or edited records now (their sealed notes, bodies and attachment files); "
      + "those changes can no longer be undone.")
  static let spec = CommandSpec(
    name: "undo",
    abstract:
      "Undo a change from its receipt (rN): your deletes and edits, assistants' additions, completions and deletes.",
    arguments: [
      ArgumentSpec(
        name: "ID|rN", kind: .receiptID,
        help: "A receipt ('tasker receipts'; 'tasker delete' and 'tasker edit' print theirs): restore the task or page "
          + "deleted (by you or an assistant), put back the fields an edit changed, delete the task or page an "
          + "assistant added, or reopen the task it completed; each receipt is undone at most once, and the undo leaves a receipt. A task's id: "
          + "mark the done task open again.", optional: true)
    ],
    options: [purge],
    json: JSONShape(
      fields: ["undone", "receipt", "summary", "purged"],
      help: "what was undone and the receipt it left; with --purge, how many kept copies were dropped."),
    discussion: "Deleting or editing a task, deleting a page, and an assistant's delete_task keep a copy of what "
      + "changed (sealed text stays "
      + "sealed) so the change can be undone; the newest \(TaskStore.maximumKeptChanges) are kept, older ones are "
      + "dropped, and --purge drops them all.",
    example: """
      tasker delete 3        # prints its receipt, such as r12
      tasker undo r12
      tasker undo --purge
      """)

  enum Target {
    case task(Int64)
    case receipt(Int64)
    case purge
  }

  let target: Target
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
    guard let word = arguments.argument(0) else {
      guard arguments.flag(Self.purge) else {
        throw arguments.usageError("give a receipt (r12), a task's id or --purge")
      }
      target = .purge
      return
    }
    guard !arguments.flag(Self.purge) else { throw arguments.usageError("--purge takes no receipt") }
    let digits = word.hasPrefix("r") ? String(word.dropFirst()) : word
    guard let id = ParsedArguments.recordID(digits) else {
      throw arguments.usageError("give a task's id (3) or a receipt (r12), not '\(word)'")
    }
    target = word.hasPrefix("r") ? .receipt(id) : .task(id)
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store()
    switch target {
    case .task(let id):
      try store.reopenTask(id: id)
      if json { return try printJSON(context, undone: RecordJSON.id(id), receipt: nil, summary: "reopened") }
      try context.print("Reopened task \(id).")
    case .receipt(let id):
      let receipt = try GateDesk(store: store).undo(id)
      if json {
        return try printJSON(context, undone: .string("r\(id)"), receipt: receipt.id, summary: receipt.summary)
      }
      // The receipt's summary starts "undid rN: "; the line says it once.
      let prefix = "undid r\(id): "
      let what = receipt.summary.hasPrefix(prefix) ? String(receipt.summary.dropFirst(prefix.count)) : receipt.summary
      try context.print("Undid r\(id): \(TerminalText.visible(what)) (receipt r\(receipt.id)).")
    case .purge:
      let count = try store.purgeUndoHistory()
      if json {
        return try context.printJSON(
          .object(["undone": .null, "receipt": .null, "summary": "purged", "purged": .int(count)]))
      }
      try context.print("Dropped \(count) kept cop\(count == 1 ? "y" : "ies"); those changes can no longer be undone.")
    }
  }

  private func printJSON(_ context: CommandContext, undone: JSONValue, receipt: Int64?, summary: String) throws {
    try context.printJSON(
      .object([
        "undone": undone, "receipt": receipt.map { .string("r\($0)") } ?? .null, "summary": .string(summary),
        "purged": .null,
      ]))
  }
}

/// `tasker gate budget|read-budget|quiet-hours|show`: the gate's settings.
struct GateCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "gate", abstract: "Set the assistant gate's daily budgets and quiet hours.",
    example: """
      tasker gate budget 20
      tasker gate quiet-hours 22:00-07:00
      """)
  static let subcommands: [any CommandDeclaration.Type] = [
    GateBudgetCommand.self, GateReadBudgetCommand.self, GateQuietHoursCommand.self, GateShowCommand.self,
  ]
}

/// `tasker gate quiet-hours HH:MM-HH:MM|off [--zone ZONE]`.
struct GateQuietHoursCommand: Command {
  static let zone = OptionSpec.value(
    "--zone", "ZONE", .text,
    help: "The IANA time zone the span is read in, such as Europe/Berlin (default: the system's, from TZ or "
      + "/etc/localtime); POSIX TZ rule strings are refused.")
  static let spec = CommandSpec(
    name: "quiet-hours",
    abstract: "Times of day, in your time zone, when assistants' actions wait for approval; 'off' clears them.",
    arguments: [ArgumentSpec(name: "SPAN", kind: .text, help: "HH:MM-HH:MM (such as 22:00-07:00) or off.")],
    options: [zone],
    json: JSONShape(fields: ["quiet_hours", "zone"], help: "the span set and its zone, or nulls when off."),
    example: "tasker gate quiet-hours 22:00-07:00 --zone Europe/Berlin")

  let span: String?
  let zoneName: String?
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    let text = arguments.argument(0)!
    zoneName = arguments.value(Self.zone)
    if text == "off" {
      guard zoneName == nil else { throw arguments.usageError("--zone goes with a span, not with off") }
      span = nil
    } else {
      span = text
    }
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    // The zone is stored by name, so a gate started with another TZ (by a
    // host) still reads the span in the user's zone.
    let hours = try span.map {
      try QuietHours(span: $0, zone: zoneName ?? context.environment["TZ"] ?? TimeZone.current.identifier)
    }
    try context.store(create: true).setGateSetting("quiet-hours", hours?.description)
    if json {
      return try context.printJSON(.object(["quiet_hours": .optional(hours?.span), "zone": .optional(hours?.zone)]))
    }
    try context.print(hours.map { "Quiet hours set to \($0.span) (\($0.zone ?? "local time"))." } ?? "Quiet hours off.")
  }
}

/// `tasker gate show`.
struct GateShowCommand: Command {
  static let spec = CommandSpec(
    name: "show", abstract: "Print the gate's settings, and each assistant key's budget, use today and queue.",
    json: JSONShape(
      fields: ["quiet_hours", "budget_default", "read_budget_default", "keys"],
      help: "quiet hours (null when off), the default budgets of actions and reads, and keys (null while the vault "
        + "is locked): every registered key, each with key_id, "
        + "name, status, budget (null when its setting is damaged), actions_today, read_budget (null when damaged), "
        + "reads_today, pending_approvals and pending_bytes."),
    discussion: "A key's budget is its own setting, else that of the key it replaced by 'taskkey rotate "
      + "--assistant', else the default (the read budget likewise); actions_today counts its calls that ran "
      + "since midnight (local time), reads_today its reading calls admitted since then; "
      + "pending_bytes is what its waiting calls' arguments hold, which the queue's caps count (at most "
      + "\(TaskStore.pendingApprovalCap) calls and \(TaskStore.pendingArgumentBytesCap) bytes per key).",
    example: "tasker gate show --json")

  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let store = try context.readerIfPresent()
    let quiet = try store?.gateSetting("quiet-hours")
    let budget = try store?.gateSetting("budget.default") ?? "\(GateToolbox.defaultBudget)"
    let reads = try store?.gateSetting("read-budget.default") ?? "\(GateBudgetKind.reads.defaultValue)"
    // A locked vault hides the registry: the rows are unknown (null), not
    // empty; any other failure to read it is an error.
    let records: [AssistantKeyRecord]?
    do {
      records = try AssistantKeyNames.records(environment: context.environment)
    } catch AssistantKeyError.vaultLocked, TaskVaultError.locked {
      records = nil
    }
    let keys = try records.map { try GateKeyUsage.rows(of: $0, store: store) }
    if json {
      let rows = keys?.map { key -> JSONValue in
        .object([
          "key_id": .string(key.keyID.text), "name": .string(key.name), "status": .string(key.status),
          "budget": key.budget.map(JSONValue.int) ?? .null, "actions_today": .int(key.actionsToday),
          "read_budget": key.readBudget.map(JSONValue.int) ?? .null, "reads_today": .int(key.readsToday),
          "pending_approvals": .int(key.pendingCount), "pending_bytes": .int(key.pendingBytes),
        ])
      }
      return try context.printJSON(
        .object([
          "quiet_hours": .optional(quiet), "budget_default": Int(budget).map(JSONValue.int) ?? .string(budget),
          "read_budget_default": Int(reads).map(JSONValue.int) ?? .string(reads),
          "keys": rows.map(JSONValue.array) ?? .null,
        ]))
    }
    try context.print("quiet-hours\t\(TerminalText.visible(quiet ?? "off"))")
    try context.print("budget.default\t\(TerminalText.visible(budget))")
    try context.print("read-budget.default\t\(TerminalText.visible(reads))")
    guard let keys else { return try context.print("keys\t(the vault is locked: run 'taskkey unlock' to see them)") }
    for key in keys {
      let fields = [
        key.keyID.text, key.name, key.status, "budget \(key.budget.map(String.init) ?? "damaged")",
        "today \(key.actionsToday)", "read-budget \(key.readBudget.map(String.init) ?? "damaged")",
        "reads today \(key.readsToday)", "pending \(key.pendingCount) (\(key.pendingBytes) bytes)",
      ]
      try context.print("key\t" + fields.map { TerminalText.visible($0) }.joined(separator: "\t"))
    }
  }
}
