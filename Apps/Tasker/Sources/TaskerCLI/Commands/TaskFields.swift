import CommandKit
import TaskerCore

/// The task field options shared by `add` and `edit`.
struct TaskFieldOptions {
  static let help = """
      --due DATE        Due day, YYYY-MM-DD.
      --estimate MIN    Estimate in minutes.
      --priority P      none, low, medium or high.
      --energy E        low, medium or high.
      --contexts TEXT   Contexts and tags as free text (stored plain).
    """

  var notes: BodySource?
  var due: String?
  var estimate: String?
  var priority: Priority?
  var energy: String?
  var contexts: String?

  /// Reads the options; `editor` allows `--notes-in-editor` (`edit`).
  init(parsing arguments: inout Arguments, editor: Bool) throws {
    notes = try BodySource.parse("notes", editor: editor, from: &arguments)
    due = try arguments.option("--due")
    estimate = try arguments.option("--estimate")
    priority = try arguments.option("--priority", Priority.init(parsing:))
    energy = try arguments.option("--energy")
    contexts = try arguments.option("--contexts")
    // Check the values now, before anything is opened; `none` clears in edit.
    if let due, due != "none" { _ = try Self.parse(due, CalendarDate.init(parsing:), arguments) }
    if let energy, energy != "none" { _ = try Self.parse(energy, Energy.init(parsing:), arguments) }
    if let estimate, estimate != "none" { _ = try Self.minutes(estimate, arguments) }
  }

  static func parse<Value>(_ text: String, _ parse: (String) throws -> Value, _ arguments: Arguments) throws -> Value {
    do {
      return try parse(text)
    } catch {
      throw arguments.usageError("\(error)")
    }
  }

  static func minutes(_ text: String, _ arguments: Arguments) throws -> Int {
    guard let minutes = Int(text), minutes >= 0 else {
      throw arguments.usageError("--estimate must be a whole number of minutes, not '\(text)'")
    }
    return minutes
  }

  /// The optional value of a clearable option: nil when not given,
  /// `.some(nil)` for `none`.
  static func clearable<Value>(_ text: String?, _ parse: (String) throws -> Value) rethrows -> Value?? {
    guard let text else { return nil }
    if text == "none" { return .some(nil) }
    return .some(try parse(text))
  }
}

/// `tasker add TITLE`: a new task.
struct AddCommand: Command {
  static let name = "add"
  static let abstract = "Add a task; its notes are sealed before they are written."
  static let usage =
    "tasker add TITLE [--notes - | --notes-file F] [--due DATE] [--estimate MIN] [--priority P] [--energy E] [--contexts TEXT] [--json]"
  static let options = """
    ARGUMENTS:
      TITLE             The task's title (stored plain).

    OPTIONS:
    \(BodySource.help("notes", what: "note text", editor: false))
    \(TaskFieldOptions.help)
      --json            Print the new task as JSON.
      -h, --help        Show this help.
    """

  let title: String
  let fields: TaskFieldOptions
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    fields = try TaskFieldOptions(parsing: &arguments, editor: false)
    json = try arguments.flag("--json")
    title = try arguments.positionals(exactly: ["TITLE"])[0]
  }

  func run(_ context: CommandContext) throws {
    var draft = TaskDraft(title: title)
    draft.notes = try context.body(fields.notes) ?? ""
    draft.due = try fields.due.map(CalendarDate.init(parsing:))
    draft.estimateMinutes = fields.estimate.flatMap { Int($0) }
    draft.priority = fields.priority ?? .none
    draft.energy = try fields.energy.map(Energy.init(parsing:))
    draft.contexts = fields.contexts ?? ""
    let task = try context.store(create: true).addTask(draft)
    if json { return try context.output.json(task) }
    try context.output.print("Added task \(task.id): \(TerminalText.visible(task.title))")
  }
}

/// `tasker edit ID`: change a task's fields.
struct EditCommand: Command {
  static let name = "edit"
  static let abstract = "Change a task's title, notes or other fields."
  static let usage =
    "tasker edit ID [--title T] [--notes - | --notes-file F | --notes-in-editor] [--due DATE|none] [--estimate MIN|none] [--priority P] [--energy E|none] [--contexts TEXT] [--json]"
  static let options = """
    ARGUMENTS:
      ID                The task's id.

    OPTIONS:
      --title T         A new title.
    \(BodySource.help("notes", what: "note text", editor: true))
    \(TaskFieldOptions.help)
                        'none' clears --due, --estimate and --energy.
      --json            Print the task after the change as JSON.
      -h, --help        Show this help.
    """

  let id: Int64
  let title: String?
  let fields: TaskFieldOptions
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    title = try arguments.option("--title")
    fields = try TaskFieldOptions(parsing: &arguments, editor: true)
    json = try arguments.flag("--json")
    id = try arguments.id(try arguments.positionals(exactly: ["ID"])[0])
    if title == nil && fields.notes == nil && fields.due == nil && fields.estimate == nil && fields.priority == nil
      && fields.energy == nil && fields.contexts == nil
    {
      throw arguments.usageError("nothing to change: give at least one option")
    }
  }

  func run(_ context: CommandContext) throws {
    var changes = TaskChanges()
    changes.title = title
    changes.notes = try context.body(fields.notes) { try context.store().notes(ofTask: id) }
    changes.due = try TaskFieldOptions.clearable(fields.due, CalendarDate.init(parsing:))
    changes.estimateMinutes = TaskFieldOptions.clearable(fields.estimate) { Int($0) ?? 0 }
    changes.priority = fields.priority
    changes.energy = try TaskFieldOptions.clearable(fields.energy, Energy.init(parsing:))
    changes.contexts = fields.contexts
    let task = try context.store().editTask(id: id, changes)
    if json { return try context.output.json(task) }
    try context.output.print("Changed task \(task.id): \(TerminalText.visible(task.title))")
  }
}
