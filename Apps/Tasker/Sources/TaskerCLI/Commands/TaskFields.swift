import CommandKit
import TaskerCore

/// The task field options shared by `add` and `edit`, declared once.
struct TaskFieldOptions {
  static let due = OptionSpec.value(
    "--due", "DATE",
    help: "Due day: YYYY-MM-DD, today, tomorrow, yesterday, a weekday (the next one, never today), +3d or +2w; "
      + "counted in local time.")
  static let estimate = OptionSpec.value("--estimate", "MIN", help: "Estimate in whole minutes.")
  static let priority = OptionSpec.value(
    "--priority", "P", .choice(Priority.allCases.map(\.name)), help: "none, low, medium or high.")
  static let energy = OptionSpec.value(
    "--energy", "E", .choice(Energy.allCases.map(\.name)), help: "low, medium or high.")
  static let contexts = OptionSpec.value("--contexts", "TEXT", help: "Contexts and tags as free text (stored plain).")
  /// `none` clears a field in `edit`.
  static let clearable = [
    OptionSpec.value("--due", "DATE", help: due.help + " 'none' clears it."),
    OptionSpec.value("--estimate", "MIN", help: estimate.help + " 'none' clears it."),
    priority,
    OptionSpec.value(
      "--energy", "E", .choice(Energy.allCases.map(\.name) + ["none"]), help: "low, medium or high; 'none' clears it."),
    contexts,
  ]

  /// The options, body options first; `editor` allows `--notes-in-editor`.
  static func options(editor: Bool) -> [OptionSpec] {
    BodySource.options("notes", what: "note text", editor: editor)
      + (editor ? clearable : [due, estimate, priority, energy, contexts])
  }

  var notes: BodySource?
  var due: CalendarDate??
  var estimate: Int??
  var priority: Priority?
  var energy: Energy??
  var contexts: String?

  /// Reads and checks every value now, before anything is opened; `none`
  /// clears a field (`edit` only: for `add` it is refused like any word).
  init(_ arguments: ParsedArguments, editor: Bool, today: CalendarDate) throws {
    notes = try BodySource.parse("notes", editor: editor, from: arguments)
    func clearable<Value>(_ option: OptionSpec, _ parse: (String) throws -> Value) throws -> Value?? {
      guard let text = arguments.value(option) else { return nil }
      if editor && text == "none" { return .some(nil) }
      do {
        return .some(try parse(text))
      } catch {
        throw arguments.usageError("\(option.long): \(error)")
      }
    }
    due = try clearable(Self.due) { try CalendarDate(parsingDue: $0, today: today) }
    estimate = try clearable(Self.estimate) { text in
      guard let minutes = Int(text), minutes >= 0, String(minutes) == text else {
        throw UsageError(message: "a whole number of minutes, not '\(text)'", usage: "")
      }
      return minutes
    }
    priority = try arguments.value(Self.priority).map(Priority.init(parsing:))
    energy = try clearable(Self.energy, Energy.init(parsing:))
    contexts = arguments.value(Self.contexts)
  }

  /// Whether no field option was given.
  var isEmpty: Bool {
    notes == nil && due == nil && estimate == nil && priority == nil && energy == nil && contexts == nil
  }
}

/// `tasker add TITLE`: a new task.
struct AddCommand: Command {
  static let spec = CommandSpec(
    name: "add", abstract: "Add a task; its notes are sealed before they are written.",
    arguments: [ArgumentSpec(name: "TITLE", kind: .text, help: "The task's title (stored plain).")],
    options: TaskFieldOptions.options(editor: false),
    json: JSONShape(fields: RecordJSON.taskDetailFields, help: "the new task, as 'show --json' prints it."),
    example: """
      tasker add 'Call the clinic' --due tomorrow --priority high
      printf 'Ask about the results\\n' | tasker add 'Call the clinic' --notes -
      """)

  let title: String
  let fields: TaskFieldOptions
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    fields = try TaskFieldOptions(arguments, editor: false, today: .localToday())
    json = arguments.flag(CommandSpec.jsonOption)
    title = arguments.argument(0)!
  }

  func run(_ context: CommandContext) throws {
    var draft = TaskDraft(title: title)
    draft.notes = try context.body(fields.notes) ?? ""
    draft.due = fields.due ?? nil
    draft.estimateMinutes = fields.estimate ?? nil
    draft.priority = fields.priority ?? .none
    draft.energy = fields.energy ?? nil
    draft.contexts = fields.contexts ?? ""
    let task = try context.store(create: true).addTask(draft)
    if json {
      return try context.printJSON(
        RecordJSON.task(task, today: .localToday(), notesLocked: false, attachments: [], planOrder: nil))
    }
    try context.print("Added task \(task.id): \(TerminalText.visible(task.title))")
  }
}

/// `tasker edit ID`: change a task's fields.
struct EditCommand: Command {
  static let title = OptionSpec.value("--title", "T", help: "A new title.")
  static let spec = CommandSpec(
    name: "edit", abstract: "Change a task's title, notes or other fields.", arguments: [.taskID],
    options: [title] + TaskFieldOptions.options(editor: true),
    json: JSONShape(fields: RecordJSON.taskDetailFields, help: "the task after the change."),
    example: """
      tasker edit 3 --due +2d --energy none
      tasker edit 3 --notes-in-editor
      """)

  let id: Int64
  let newTitle: String?
  let fields: TaskFieldOptions
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    newTitle = arguments.value(Self.title)
    fields = try TaskFieldOptions(arguments, editor: true, today: .localToday())
    json = arguments.flag(CommandSpec.jsonOption)
    id = arguments.recordID(at: 0)!
    if newTitle == nil && fields.isEmpty { throw arguments.usageError("nothing to change: give at least one option") }
  }

  func run(_ context: CommandContext) throws {
    var changes = TaskChanges()
    changes.title = newTitle
    changes.notes = try context.body(fields.notes) { try context.store().notes(ofTask: id) }
    changes.due = fields.due
    changes.estimateMinutes = fields.estimate
    changes.priority = fields.priority
    changes.energy = fields.energy
    changes.contexts = fields.contexts
    let store = try context.store()
    let receipt = try store.editTask(id: id, changes, keepingCopyAs: .user)
    let task = try store.task(id: id)
    if json {
      return try context.printJSON(
        RecordJSON.task(
          task, today: .localToday(), notesLocked: false, attachments: try store.attachments(of: .task(id)),
          planOrder: try store.planOrder(ofTask: id)))
    }
    try context.print("Changed task \(task.id): \(TerminalText.visible(task.title)) (undo: tasker undo r\(receipt.id))")
  }
}
