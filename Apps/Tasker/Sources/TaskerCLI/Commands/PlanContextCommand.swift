import CommandKit
import FoundationEssentials
import TaskerCore

/// `tasker plan-context`: what a planning provider would be given.
struct PlanContextCommand: Command {
  static let today = OptionSpec.value("--today", "DATE", help: "The planning day, YYYY-MM-DD (default: today here).")
  static let limit = OptionSpec.value("--limit", "N", .recordID, help: "At most N tasks (default 1000).")
  static let spec = CommandSpec(
    name: "plan-context", abstract: "Print what a planning provider gets: per open task only six fields, never notes.",
    options: [today, limit],
    json: JSONShape(
      fields: ["candidates"],
      help: "the candidates, each with its task's id and title, estimate_minutes, due, priority, energy, overdue."
    ),
    discussion: "Each task gives its title, estimate, due day, priority, energy and whether it is overdue; the type "
      + "has no field for anything else.",
    example: "tasker plan-context --json")

  let json: Bool
  let planningDay: CalendarDate?
  let count: Int

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
    do {
      planningDay = try arguments.value(Self.today).map(CalendarDate.init(parsing:))
    } catch {
      throw arguments.usageError("--today: \(error)")
    }
    count = arguments.recordID(Self.limit).map { Int($0) } ?? 1000
  }

  func run(_ context: CommandContext) throws {
    let plan = try context.reader().planContext(today: planningDay ?? CalendarDate.localToday(), limit: count)
    if json {
      // The id is for the user to apply a plan by hand; a request to a provider labels candidates instead.
      let candidates = zip(plan.taskIDs, plan.candidates).map { id, candidate -> JSONValue in
        var members = candidate.jsonMembers
        members["id"] = RecordJSON.id(id)
        return .object(members)
      }
      return try context.printJSON(.object(["candidates": .array(candidates)]))
    }
    for (id, candidate) in zip(plan.taskIDs, plan.candidates) {
      var line = "#\(id)  " + TerminalText.visible(candidate.title)
      if let due = candidate.due { line += "  due \(due)" + (candidate.overdue ? " (overdue)" : "") }
      if let minutes = candidate.estimateMinutes { line += "  \(minutes) min" }
      if candidate.priority != .none { line += "  !\(candidate.priority.name)" }
      if let energy = candidate.energy { line += "  energy \(energy.name)" }
      try context.print(line)
    }
  }
}
