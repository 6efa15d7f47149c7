import CommandKit
import TaskerCore
import TaskerPlanning

/// The options `plan` and `ask` share, and the context they send.
struct PlanningOptions {
  static let today = OptionSpec.value("--today", "DATE", help: "The planning day, YYYY-MM-DD (default: today here).")
  static let limit = OptionSpec.value("--limit", "N", .recordID, help: "At most N open tasks (default 200).")
  static let all = [
    today, limit, ProviderDelivery.provider, ProviderDelivery.dryRun, ProviderDelivery.yes, ProviderDelivery.timeout,
  ]

  let today: CalendarDate
  let count: Int
  let provider: String?
  let dryRun: Bool
  let yes: Bool
  let seconds: Int
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    do {
      today = try arguments.value(Self.today).map(CalendarDate.init(parsing:)) ?? CalendarDate.localToday()
    } catch {
      throw arguments.usageError("--today: \(error)")
    }
    count = arguments.recordID(Self.limit).map { Int(min($0, 10_000)) } ?? 200
    provider = arguments.value(ProviderDelivery.provider)
    dryRun = arguments.flag(ProviderDelivery.dryRun)
    yes = arguments.flag(ProviderDelivery.yes)
    seconds = try ProviderDelivery.seconds(arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  /// The plan context of `store`, or an empty one when there is no
  /// database yet (a dry run on a new home).
  func context(of store: TaskStore?) throws -> PlanContext {
    try store?.planContext(today: today, limit: count) ?? PlanContext(candidates: [], taskIDs: [])
  }
}

/// `tasker plan`: an ordered plan of the open tasks from a provider.
struct PlanCommand: Command {
  static let apply = OptionSpec.flag(
    "--apply", help: "Store the plan's order in each task's plan_order (shown by 'show'); nothing else changes.")
  static let spec = CommandSpec(
    name: "plan", abstract: "Ask a planning provider to order your open tasks, and show (or apply) the plan.",
    options: PlanningOptions.all + [apply],
    json: JSONShape(
      fields: ["provider", "plan", "applied", "skipped"],
      help: "the provider, the steps (id, title, reason), whether the order was applied, and the planned tasks "
        + "that were no longer open."),
    discussion: "Sends only what 'plan-context' shows, with each task labelled t1, t2, … for this request (no "
      + "database id leaves the device). The answer is checked before it is shown: only the labels sent, each at "
      + "most once, short reasons without control characters. A provider can order tasks, never change or read "
      + "anything else.",
    example: """
      tasker plan --dry-run
      tasker plan --provider local --apply
      """)

  let options: PlanningOptions
  let applying: Bool

  init(_ arguments: ParsedArguments) throws {
    options = try PlanningOptions(arguments)
    applying = arguments.flag(Self.apply)
    if applying && options.dryRun { throw arguments.usageError("--apply cannot go with --dry-run") }
  }

  func run(_ context: CommandContext) throws {
    let delivery = try ProviderDelivery(provider: options.provider, context: context)
    let store = try options.dryRun ? context.readerIfPresent() : context.store(create: true)
    let plan = try options.context(of: store)
    let request = try PlanRequest(
      .plan, candidates: plan.candidates, today: options.today, model: delivery.record.model,
      requestsSchema: delivery.record.requestsSchema)
    guard !plan.candidates.isEmpty else { return try nothingToPlan(delivery.record.name, context) }
    if options.dryRun { return try delivery.printDryRun(request) }
    let steps = try delivery.send(request, kind: .plan, yes: options.yes, seconds: options.seconds) {
      body throws(PlanningError) in
      try PlanAnswer.plan(body, labels: request.labels)
    }
    let ids = steps.map { plan.taskIDs[$0.index] }
    let applied = try store.map { applying ? try $0.applyPlanOrder(ids) : nil } ?? nil
    if options.json {
      let items = steps.map { step -> JSONValue in
        .object([
          "id": RecordJSON.id(plan.taskIDs[step.index]), "title": .string(plan.candidates[step.index].title),
          "reason": .string(step.reason),
        ])
      }
      return try context.printJSON(
        .object([
          "provider": .string(delivery.record.name), "plan": .array(items), "applied": .bool(applied != nil),
          "skipped": .array((applied?.skipped ?? []).map(RecordJSON.id)),
        ]))
    }
    try context.print("Plan from \(delivery.record.name): \(steps.count) of \(plan.candidates.count) open tasks")
    for (position, step) in steps.enumerated() {
      let title = TerminalText.visible(plan.candidates[step.index].title)
      try context.print(
        "\(position + 1). \(title) (#\(plan.taskIDs[step.index])) — \(TerminalText.visible(step.reason))")
    }
    if let applied {
      try context.print("Applied: plan_order set on \(applied.ordered.count) tasks, cleared on the rest.")
      if !applied.skipped.isEmpty {
        context.note(
          "tasker: left out tasks no longer open: " + applied.skipped.map { "#\($0)" }.joined(separator: " "))
      }
    }
  }
}

extension PlanCommand {
  /// No open task: nothing is sent (nothing to order, and an empty `enum`
  /// is no valid schema); `--apply` still clears every order.
  func nothingToPlan(_ provider: String, _ context: CommandContext) throws {
    if applying { _ = try context.store(create: true).applyPlanOrder([]) }
    if options.json {
      return try context.printJSON(
        .object(["provider": .string(provider), "plan": [], "applied": .bool(applying), "skipped": []]))
    }
    context.note("tasker: no open task to plan; nothing was sent")
  }
}

/// `tasker ask QUESTION`: a question about the open tasks, answered in text.
struct AskCommand: Command {
  static let spec = CommandSpec(
    name: "ask", abstract: "Ask a planning provider a question about your open tasks; the answer is printed as text.",
    arguments: [ArgumentSpec(name: "QUESTION", kind: .text, help: "The question (up to 2000 characters).")],
    options: PlanningOptions.all,
    json: JSONShape(fields: ["provider", "answer"], help: "the provider and the answer's text as it came."),
    discussion: "Sends the question with the same six fields per task as 'plan' (never notes, contexts, "
      + "attachments or page text). The answer is printed with its control characters made visible.",
    example: "tasker ask 'What should I do before lunch?'")

  let question: String
  let options: PlanningOptions

  init(_ arguments: ParsedArguments) throws {
    question = arguments.argument(0)!
    options = try PlanningOptions(arguments)
    try PlanRequest.check(question: question)
  }

  func run(_ context: CommandContext) throws {
    let delivery = try ProviderDelivery(provider: options.provider, context: context)
    let plan = try options.context(of: options.dryRun ? context.readerIfPresent() : context.store(create: true))
    let request = try PlanRequest(
      .ask(question: question), candidates: plan.candidates, today: options.today, model: delivery.record.model,
      requestsSchema: false)
    if options.dryRun { return try delivery.printDryRun(request) }
    let answer = try delivery.send(
      request, kind: .ask, yes: options.yes, seconds: options.seconds, check: PlanAnswer.text)
    if options.json {
      return try context.printJSON(.object(["provider": .string(delivery.record.name), "answer": .string(answer)]))
    }
    try context.print(TerminalText.visible(answer, keepingLines: true))
  }
}
