import CommandKit
import TaskerCore

/// `tasker list`: tasks without their notes.
struct ListCommand: Command {
  static let name = "list"
  static let abstract = "List tasks (titles and fields, never notes); needs no key."
  static let usage = "tasker list [--done | --all] [--search TEXT] [--json]"
  static let options = """
    OPTIONS:
      --done            Completed tasks only.
      --all             Open and completed tasks.
      --search TEXT     Tasks whose title or contexts contain TEXT.
      --json            Print a JSON array.
      -h, --help        Show this help.
    """

  let filter: TaskFilter
  let search: String?
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    let done = try arguments.flag("--done")
    let all = try arguments.flag("--all")
    guard !(done && all) else { throw arguments.usageError("give --done or --all, not both") }
    filter = all ? .all : done ? .done : .open
    search = try arguments.option("--search")
    json = try arguments.flag("--json")
    _ = try arguments.positionals(exactly: [])
  }

  func run(_ context: CommandContext) throws {
    let store = try context.reader()
    var tasks = try search.map { try store.searchTasks($0, limit: Int.max) } ?? store.tasks(filter)
    if search != nil && filter != .all { tasks.removeAll { $0.status != (filter == .done ? .done : .open) } }
    if json { return try context.output.json(tasks) }
    // One buffer for the whole listing: this runs over every task.
    var text = ""
    text.reserveCapacity(tasks.count * 48)
    for task in tasks {
      text += String(task.id)
      text += task.status == .done ? "\t[x] " : "\t[ ] "
      text += TerminalText.visible(task.title)
      if let due = task.due {
        text += "  due "
        text += due.description
      }
      if task.priority != .none {
        text += "  !"
        text += task.priority.name
      }
      text += "\n"
    }
    try context.output.write(Array(text.utf8))
  }
}

/// `tasker show ID`: one task with its notes opened.
struct ShowCommand: Command {
  static let name = "show"
  static let abstract = "Show a task with its notes opened."
  static let usage = "tasker show ID [--json]"
  static let options = """
    ARGUMENTS:
      ID                The task's id.

    OPTIONS:
      --json            Print the task as JSON.
      -h, --help        Show this help.
    """

  let id: Int64
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    json = try arguments.flag("--json")
    id = try arguments.id(try arguments.positionals(exactly: ["ID"])[0])
  }

  /// Prints the task. With the vault locked and the notes sealed, it
  /// prints the plain fields and a line saying the notes are locked, then
  /// fails with the vault's error (exit 14), so a script can tell a locked
  /// note from an empty one; `--json` then gives the fields and
  /// `"notesLocked": true` instead of `notes`.
  func run(_ context: CommandContext) throws {
    let store = try context.reader()
    let task: TaskRecord
    var locked: TaskerError?
    do {
      task = try store.task(id: id)
    } catch let error as TaskerError where ExitCode.of(error) == .vaultLocked {
      task = try store.task(id: id, openingNotes: false)
      locked = error
    }
    if json {
      if locked != nil { try context.output.json(LockedTask(task)) } else { try context.output.json(task) }
    } else {
      try context.output.print(Self.lines(task, notesLocked: locked != nil).joined(separator: "\n"))
    }
    if let locked { throw locked }
  }

  /// The plain text of `task`: every field made visible, the notes on
  /// lines of their own.
  static func lines(_ task: TaskRecord, notesLocked: Bool) -> [String] {
    var lines = ["Task \(task.id): \(TerminalText.visible(task.title))", "Status:    \(task.status.rawValue)"]
    if let due = task.due { lines.append("Due:       \(due)") }
    if let estimate = task.estimateMinutes { lines.append("Estimate:  \(estimate) min") }
    if task.priority != .none { lines.append("Priority:  \(task.priority.name)") }
    if let energy = task.energy { lines.append("Energy:    \(energy.name)") }
    if !task.contexts.isEmpty { lines.append("Contexts:  \(TerminalText.visible(task.contexts))") }
    if notesLocked {
      lines.append("Notes:     locked (sealed; run 'taskkey unlock' to read them)")
    } else if !task.notes.isEmpty {
      lines += ["", TerminalText.visible(task.notes, keepingLines: true)]
    }
    return lines
  }
}

/// `show --json` for a task whose notes are sealed while the vault is
/// locked: the task's fields under their usual names, no `notes`, and
/// `"notesLocked": true`.
struct LockedTask: Encodable {
  let task: TaskRecord

  init(_ task: TaskRecord) { self.task = task }

  enum CodingKeys: String, CodingKey {
    case id, title, due, estimateMinutes, priority, energy, status, created, completed, contexts, notesLocked
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(task.id, forKey: .id)
    try container.encode(task.title, forKey: .title)
    try container.encodeIfPresent(task.due, forKey: .due)
    try container.encodeIfPresent(task.estimateMinutes, forKey: .estimateMinutes)
    try container.encode(task.priority, forKey: .priority)
    try container.encodeIfPresent(task.energy, forKey: .energy)
    try container.encode(task.status, forKey: .status)
    try container.encode(task.created, forKey: .created)
    try container.encodeIfPresent(task.completed, forKey: .completed)
    try container.encode(task.contexts, forKey: .contexts)
    try container.encode(true, forKey: .notesLocked)
  }
}

/// A command that takes one task id and changes its state.
protocol TaskStateCommand: Command {
  var id: Int64 { get }
  init(id: Int64)
  static var verb: String { get }
  func apply(_ store: TaskStore) throws
}

extension TaskStateCommand {
  static var usage: String { "tasker \(name) ID" }
  static var options: String {
    """
    ARGUMENTS:
      ID                The task's id.

    OPTIONS:
      -h, --help        Show this help.
    """
  }

  init(parsing arguments: inout Arguments) throws {
    self.init(id: try arguments.id(try arguments.positionals(exactly: ["ID"])[0]))
  }

  func run(_ context: CommandContext) throws {
    try apply(try context.store())
    try context.output.print("\(Self.verb) task \(id).")
  }
}

/// `tasker done ID`.
struct DoneCommand: TaskStateCommand {
  static let name = "done"
  static let abstract = "Mark a task done."
  static let verb = "Completed"
  let id: Int64
  func apply(_ store: TaskStore) throws { try store.completeTask(id: id) }
}

/// `tasker delete ID`.
struct DeleteCommand: TaskStateCommand {
  static let name = "delete"
  static let abstract = "Delete a task, its notes and its attachments."
  static let verb = "Deleted"
  let id: Int64
  func apply(_ store: TaskStore) throws { try store.deleteTask(id: id) }
}
