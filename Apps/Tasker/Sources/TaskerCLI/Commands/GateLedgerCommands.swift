import CommandKit
import FoundationEssentials
import TaskSystem
import TaskVault
import TaskerCore
import TaskerGate

/// `tasker approvals list|approve|deny`: the queue of assistant calls that
/// wait for the user.
struct ApprovalsCommand: Command {
  static let name = "approvals"
  static let abstract = "List, approve or deny assistant calls that wait for your approval."
  static let usage = """
    tasker approvals list [--all] [--json]
           tasker approvals approve ID
           tasker approvals deny ID
    """
  static let options = """
    SUBCOMMANDS:
      list              The calls waiting (with --all, also those decided).
      approve ID        Run the call now, as the assistant that asked; refused
                        when its key was revoked or expired since.
      deny ID           Drop the call; it never runs.

    OPTIONS:
      --all             (list) Include approved and denied calls.
      --json            (list) Print a JSON array.
      -h, --help        Show this help.
    """

  enum Action {
    case list(all: Bool, json: Bool)
    case approve(Int64)
    case deny(Int64)
  }

  let action: Action

  init(parsing arguments: inout Arguments) throws {
    let all = try arguments.flag("--all")
    let json = try arguments.flag("--json")
    let words = try arguments.positionals()
    switch (words.first, words.count) {
    case ("list", 1): action = .list(all: all, json: json)
    case ("approve", 2): action = .approve(try arguments.id(words[1]))
    case ("deny", 2): action = .deny(try arguments.id(words[1]))
    default: throw arguments.usageError("expected 'approvals list', 'approvals approve ID' or 'approvals deny ID'")
    }
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store()
    switch action {
    case .list(let all, let json):
      let approvals = try store.approvals(pendingOnly: !all)
      if json { return try context.output.printJSON(JSONValue.array(approvals.map(GateReceiptFormat.json)).text) }
      for approval in approvals {
        let fields = [approval.status, "\(approval.assistant) (\(approval.keyID))", approval.reason, approval.summary]
        try context.output.print("#\(approval.id)\t" + fields.map { TerminalText.visible($0) }.joined(separator: "\t"))
      }
    case .approve(let id):
      let authenticator = GateAuthenticator(vaultDirectory: Vault.defaultDirectory(environment: context.environment))
      let receipt = try GateDesk(store: store).approve(id, checkKey: authenticator.checkStillValid)
      try context.output.print("Approved #\(id) and ran it: \(receipt.summary) (receipt r\(receipt.id)).")
    case .deny(let id):
      let receipt = try GateDesk(store: store).deny(id)
      try context.output.print("Denied #\(id) (receipt r\(receipt.id)).")
    }
  }
}

/// `tasker receipts`: what assistants (and trusted mode) did, newest first.
struct ReceiptsCommand: Command {
  static let name = "receipts"
  static let abstract = "List the gate's receipts: who did what, when, and what the gate decided."
  static let usage = "tasker receipts [--limit N] [--json]"
  static let options = """
    OPTIONS:
      --limit N         The newest N receipts (default 50).
      --json            Print a JSON array in the receipt format.
      -h, --help        Show this help.
    """

  let limit: Int
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    let parsed = try arguments.option("--limit") { text -> Int in
      guard let value = Int(text), value > 0, value <= 100_000 else {
        throw CLIError.usage(message: "--limit must be 1 to 100000", usage: "usage: \(Self.usage)")
      }
      return value
    }
    limit = parsed ?? 50
    json = try arguments.flag("--json")
    _ = try arguments.positionals(exactly: [])
  }

  /// `at` (seconds since the epoch) as ISO 8601 in UTC, e.g. `2026-12-01T14:04:05Z`.
  static func isoTime(_ at: Int64) -> String {
    let time = CivilTime.utc(Double(at))
    return "\(time.dateText)T\(time.secondText)Z"
  }

  func run(_ context: CommandContext) throws {
    let receipts = try context.store().receipts(limit: limit)
    if json { return try context.output.printJSON(JSONValue.array(receipts.map(GateReceiptFormat.json)).text) }
    for receipt in receipts {
      let who = receipt.keyID.map { "\(receipt.assistant ?? "?") (\($0))" } ?? receipt.actor
      var line = "r\(receipt.id)\t\(Self.isoTime(receipt.at))\t"
      line += [who, receipt.tool, receipt.decision, receipt.summary].map { TerminalText.visible($0) }
        .joined(separator: "\t")
      if receipt.undo != nil { line += "\t(undo: tasker undo r\(receipt.id))" }
      try context.output.print(line)
    }
  }
}

/// `tasker undo ID` reopens a done task; `tasker undo rN` undoes what
/// receipt N recorded (an addition or a completion).
struct UndoCommand: Command {
  static let name = "undo"
  static let abstract = "Reopen a done task, or undo an addition or completion from its receipt (rN)."
  static let usage = "tasker undo ID | tasker undo rRECEIPT"
  static let options = """
    ARGUMENTS:
      ID                A task's id: mark the done task open again.
      rRECEIPT          A receipt ('tasker receipts'): delete the task or page
                        it added, or reopen the task it completed. Each receipt
                        is undone at most once, and the undo leaves a receipt.

    OPTIONS:
      -h, --help        Show this help.
    """

  enum Target {
    case task(Int64)
    case receipt(Int64)
  }

  let target: Target

  init(parsing arguments: inout Arguments) throws {
    let word = try arguments.positionals(exactly: ["ID"])[0]
    if word.hasPrefix("r") {
      target = .receipt(try arguments.id(String(word.dropFirst()), name: "RECEIPT"))
    } else {
      target = .task(try arguments.id(word))
    }
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store()
    switch target {
    case .task(let id):
      try store.reopenTask(id: id)
      try context.output.print("Reopened task \(id).")
    case .receipt(let id):
      let receipt = try GateDesk(store: store).undo(id)
      try context.output.print("Undid r\(id): \(receipt.summary) (receipt r\(receipt.id)).")
    }
  }
}

/// `tasker gate budget|quiet-hours|show`: the gate's settings.
struct GateCommand: Command {
  static let name = "gate"
  static let abstract = "Set the assistant gate's daily budgets and quiet hours."
  static let usage = """
    tasker gate budget N [--key KEYID]
           tasker gate quiet-hours HH:MM-HH:MM|off
           tasker gate show
    """
  static let options = """
    SUBCOMMANDS:
      budget N          Actions per day an assistant may take (0 to 100000;
                        default 100). With --key, for that key only.
      quiet-hours SPAN  Local times when assistants' actions wait for approval
                        instead of running, e.g. 22:00-07:00; 'off' clears them.
      show              Print the settings.

    OPTIONS:
      --key KEYID       (budget) The key's public id, tkid_ and 16 hex digits.
      -h, --help        Show this help.
    """

  enum Action {
    case budget(Int, key: String?)
    case quietHours(QuietHours?)
    case show
  }

  let action: Action

  init(parsing arguments: inout Arguments) throws {
    let key = try arguments.option("--key")
    let words = try arguments.positionals()
    switch (words.first, words.count) {
    case ("budget", 2):
      guard let value = Int(words[1]), (0...GateToolbox.maximumBudget).contains(value) else {
        throw GateError.invalidBudget(words[1])
      }
      if let key, !(key.hasPrefix("tkid_") && key.count == 21) {
        throw arguments.usageError("--key must be a key id, tkid_ and 16 hex digits ('taskkey list' shows them)")
      }
      action = .budget(value, key: key)
    case ("quiet-hours", 2): action = .quietHours(words[1] == "off" ? nil : try QuietHours(words[1]))
    case ("show", 1): action = .show
    default: throw arguments.usageError("expected 'gate budget N', 'gate quiet-hours SPAN' or 'gate show'")
    }
    if key != nil, case .budget = action {} else if key != nil { throw arguments.usageError("--key goes with budget") }
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store(create: true)
    switch action {
    case .budget(let value, let key):
      try store.setGateSetting("budget." + (key ?? "default"), String(value))
      try context.output.print("Budget \(key.map { "of \($0)" } ?? "of every key") set to \(value) actions a day.")
    case .quietHours(let hours):
      try store.setGateSetting("quiet-hours", hours?.description)
      try context.output.print(hours.map { "Quiet hours set to \($0) (local time)." } ?? "Quiet hours off.")
    case .show:
      let quiet = try store.gateSetting("quiet-hours") ?? "off"
      let budget = try store.gateSetting("budget.default") ?? "\(GateToolbox.defaultBudget)"
      try context.output.print("quiet-hours\t\(TerminalText.visible(quiet))")
      try context.output.print("budget.default\t\(TerminalText.visible(budget))")
    }
  }
}
