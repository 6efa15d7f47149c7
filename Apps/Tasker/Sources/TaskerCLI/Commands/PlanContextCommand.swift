import CommandKit
import FoundationEssentials
import TaskerCore

/// `tasker plan-context`: what a planning provider would be given.
struct PlanContextCommand: Command {
  static let name = "plan-context"
  static let abstract = "Print what a planning provider gets: per open task only six fields, never notes."
  static let usage = "tasker plan-context [--json] [--today DATE] [--limit N]"
  static let options = """
    OPTIONS:
      --json            Print the PlanContext as JSON.
      --today DATE      The planning day, YYYY-MM-DD (default: today here).
      --limit N         At most N tasks (default 1000).
      -h, --help        Show this help.

    Each task gives its title, estimate, due day, priority, energy and
    whether it is overdue; the type has no field for anything else.
    """

  let json: Bool
  let today: CalendarDate?
  let limit: Int

  init(parsing arguments: inout Arguments) throws {
    json = try arguments.flag("--json")
    today = try arguments.option("--today", CalendarDate.init(parsing:))
    let limitText = try arguments.option("--limit")
    guard let limit = Int(limitText ?? "1000"), limit > 0 else {
      throw arguments.usageError("--limit must be a positive whole number")
    }
    self.limit = limit
    _ = try arguments.positionals(exactly: [])
  }

  func run(_ context: CommandContext) throws {
    let plan = try context.reader().planContext(today: today ?? CalendarDate.today(), limit: limit)
    if json { return try context.output.json(plan) }
    for candidate in plan.candidates {
      var line = TerminalText.visible(candidate.title)
      if let due = candidate.due { line += "  due \(due)" + (candidate.overdue ? " (overdue)" : "") }
      if let minutes = candidate.estimateMinutes { line += "  \(minutes) min" }
      if candidate.priority != .none { line += "  !\(candidate.priority.name)" }
      if let energy = candidate.energy { line += "  energy \(energy.name)" }
      try context.output.print(line)
    }
  }
}
