import CommandKit
import TaskerCore
import TaskerGate

/// What `tasker gate budget` and `tasker gate read-budget` share: the
/// number, the key (`--key KEYID|NAME`), `--json`, and the setting written.
struct GateBudgetSetting {
  /// `--key`, the same option for both budgets.
  static let key = OptionSpec.value(
    "--key", "KEYID", .text,
    help: "The key: its public id, tkid_ and 16 hex digits, or its assistant's name (the name's current key); "
      + "'taskkey list' shows both.")

  /// The `--json` shape of both: the budget set and the key.
  static func json(_ member: String) -> JSONShape {
    JSONShape(fields: [member, "key_id"], help: "the budget set and the key (null: every key).")
  }

  let kind: GateBudgetKind
  let value: Int
  let key: String?
  let json: Bool

  init(_ arguments: ParsedArguments, kind: GateBudgetKind) throws {
    self.kind = kind
    value = try kind.parse(arguments.argument(0)!)
    key = arguments.value(Self.key)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  /// Writes `<prefix>.<key id>` (or `.default`) and prints what was set.
  func run(_ context: CommandContext, member: String, noun: String) throws {
    let keyID = try key.map { text in
      try AssistantKeyNames.resolve(text, option: "--key") {
        try AssistantKeyNames.records(environment: context.environment)
      }
    }
    try context.store(create: true).setGateSetting(
      kind.settingPrefix + "." + (keyID?.text ?? "default"), String(value))
    if json { return try context.printJSON(.object([member: .int(value), "key_id": .optional(keyID?.text)])) }
    try context.print("\(noun) \(keyID.map { "of \($0)" } ?? "of every key") set to \(value) \(kind.rawValue) a day.")
  }
}

/// `tasker gate budget N [--key KEYID]`.
struct GateBudgetCommand: Command {
  static let spec = CommandSpec(
    name: "budget", abstract: "Actions per day an assistant may take (0 to 100000; default 100).",
    arguments: [ArgumentSpec(name: "N", kind: .text, help: "The number of actions a day.")],
    options: [GateBudgetSetting.key], json: GateBudgetSetting.json("budget"),
    example: """
      tasker gate budget 20 --key tkid_0123456789abcdef
      tasker gate budget 5 --key planner
      """)

  let setting: GateBudgetSetting

  init(_ arguments: ParsedArguments) throws {
    setting = try GateBudgetSetting(arguments, kind: .actions)
  }

  func run(_ context: CommandContext) throws {
    try setting.run(context, member: "budget", noun: "Budget")
  }
}

/// `tasker gate read-budget N [--key KEYID]`.
struct GateReadBudgetCommand: Command {
  static let spec = CommandSpec(
    name: "read-budget",
    abstract:
      "Reading calls per day an assistant may make (0 to 1000000; default 2000); trusted mode is never counted.",
    arguments: [ArgumentSpec(name: "N", kind: .text, help: "The number of reads a day.")],
    options: [GateBudgetSetting.key], json: GateBudgetSetting.json("read_budget"),
    discussion: "Reads are list_tasks, search_tasks, show_task and read_note. A key's read budget is its own "
      + "setting, else that of the key it replaced by 'taskkey rotate --assistant', else the default; a read "
      + "past it is refused (MCP error -32001, data.budget \"reads\").",
    example: """
      tasker gate read-budget 500 --key planner
      tasker gate read-budget 5000
      """)

  let setting: GateBudgetSetting

  init(_ arguments: ParsedArguments) throws {
    setting = try GateBudgetSetting(arguments, kind: .reads)
  }

  func run(_ context: CommandContext) throws {
    try setting.run(context, member: "read_budget", noun: "Read budget")
  }
}
