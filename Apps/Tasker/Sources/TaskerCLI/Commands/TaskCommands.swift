import CommandKit
import TaskerCore

/// `tasker list`: tasks without their notes.
struct ListCommand: Command {
  static let done = OptionSpec.flag("--done", help: "Completed tasks only.")
  static let all = OptionSpec.flag("--all", help: "Open and completed tasks.")
  static let search = OptionSpec.value("--search", "TEXT", help: "Tasks whose title or contexts contain TEXT.")
  static let planned = OptionSpec.flag(
    "--planned", help: "The open tasks of the applied plan ('tasker plan --apply'), in its order.")
  static let spec = CommandSpec(
    name: "list", abstract: "List tasks (titles and fields, never notes); needs no key.",
    options: [done, all, search, planned],
    json: JSONShape(
      fields: ["tasks", "pending_approvals"],
      help: "tasks (each with \(RecordJSON.taskFields.joined(separator: ", "))) and the number of pending approvals."),
    discussion: "Overdue open tasks are marked; a line on standard error says when assistants' calls wait for "
      + "'tasker approvals list'. A new home with no database yet lists nothing and exits 0.",
    example: """
      tasker list
      tasker list --all --search clinic --json
      """)

  let filter: TaskFilter
  let searchText: String?
  let inPlanOrder: Bool
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    let done = arguments.flag(Self.done)
    let all = arguments.flag(Self.all)
    guard !(done && all) else { throw arguments.usageError("give --done or --all, not both") }
    filter = all ? .all : done ? .done : .open
    searchText = arguments.value(Self.search)
    inPlanOrder = arguments.flag(Self.planned)
    if inPlanOrder && (done || all) {
      throw arguments.usageError("--planned lists open tasks: leave out --done and --all")
    }
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    var tasks: [TaskSummary] = []
    var pending = 0
    if let store = try context.readerIfPresent() {
      tasks = try searchText.map { try store.searchTasks($0, limit: Int.max) } ?? store.tasks(filter)
      if searchText != nil && filter != .all { tasks.removeAll { $0.status != (filter == .done ? .done : .open) } }
      pending = try store.pendingApprovalCount()
    }
    if inPlanOrder {
      tasks = tasks.filter { $0.planOrder != nil && $0.status == .open }.sorted {
        ($0.planOrder ?? 0) < ($1.planOrder ?? 0)
      }
    }
    let today = CalendarDate.localToday()
    if json {
      return try context.printJSON(
        .object(["tasks": .array(tasks.map { RecordJSON.task($0, today: today) }), "pending_approvals": .int(pending)]))
    }
    // One buffer for the whole listing: this runs over every task.
    var text = ""
    text.reserveCapacity(tasks.count * 48)
    for task in tasks {
      text += String(task.id)
      text += task.status == .done ? "\t[x] " : "\t[ ] "
      text += TerminalText.visible(task.title)
      if let due = task.due {
        text += task.isOverdue(today: today) ? "  OVERDUE since " : "  due "
        text += due.description
      }
      if task.priority != .none {
        text += "  !"
        text += task.priority.name
      }
      if let step = task.planOrder {
        text += "  plan step "
        text += String(step)
      }
      text += "\n"
    }
    try context.write(Array(text.utf8))
    if pending > 0 {
      context.note("\(pending) assistant call\(pending == 1 ? "" : "s") wait for you: tasker approvals list")
    }
  }
}

/// `tasker show ID`: one task with its notes opened.
struct ShowCommand: Command {
  static let spec = CommandSpec(
    name: "show", abstract: "Show a task with its notes opened, its dates and its attachments.",
    arguments: [.taskID],
    json: JSONShape(
      fields: RecordJSON.taskDetailFields,
      help: "the task; notes is null and notes_locked true while the vault is locked."),
    discussion: "With the vault locked and the notes sealed, the plain fields print and the command exits 14, so a "
      + "script can tell a locked note from an empty one.",
    example: "tasker show 3")

  let id: Int64
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
    id = arguments.recordID(at: 0)!
  }

  /// Prints the task. With the vault locked and the notes sealed, it
  /// prints the plain fields and a line saying the notes are locked, then
  /// fails with the vault's error (exit 14).
  func run(_ context: CommandContext) throws {
    let store = try context.reader()
    let task: TaskRecord
    var locked: TaskerError?
    do {
      task = try store.task(id: id)
    } catch let error as TaskerError where error.exitCode == .vaultLocked {
      task = try store.task(id: id, openingNotes: false)
      locked = error
    }
    let attachments = try store.attachments(of: .task(id))
    let planOrder = try store.planOrder(ofTask: id)
    let today = CalendarDate.localToday()
    if json {
      try context.printJSON(
        RecordJSON.task(
          task, today: today, notesLocked: locked != nil, attachments: attachments, planOrder: planOrder))
    } else {
      var lines = Self.lines(task, today: today, notesLocked: locked != nil, attachments: attachments)
      if let planOrder { lines.insert("Plan:      step \(planOrder) of the applied plan", at: 2) }
      try context.print(lines.joined(separator: "\n"))
    }
    if let locked { throw locked }
  }

  /// The plain text of `task`: every field made visible, local times, the
  /// notes on lines of their own.
  static func lines(_ task: TaskRecord, today: CalendarDate, notesLocked: Bool, attachments: [AttachmentRecord])
    -> [String]
  {
    var lines = ["Task \(task.id): \(TerminalText.visible(task.title))", "Status:    \(task.status.rawValue)"]
    if let due = task.due { lines.append("Due:       \(due)" + (task.isOverdue(today: today) ? " (overdue)" : "")) }
    if let estimate = task.estimateMinutes { lines.append("Estimate:  \(estimate) min") }
    if task.priority != .none { lines.append("Priority:  \(task.priority.name)") }
    if let energy = task.energy { lines.append("Energy:    \(energy.name)") }
    if !task.contexts.isEmpty { lines.append("Contexts:  \(TerminalText.visible(task.contexts))") }
    lines.append("Created:   \(TimeStamp.local(Double(task.created)))")
    if let completed = task.completed { lines.append("Completed: \(TimeStamp.local(Double(completed)))") }
    for attachment in attachments {
      lines.append(
        "Attached:  #\(attachment.id) \(TerminalText.visible(attachment.name)) (\(attachment.byteCount) bytes)")
    }
    if notesLocked {
      lines.append("Notes:     locked (sealed; run 'taskkey unlock' to read them)")
    } else if !task.notes.isEmpty {
      lines += ["", TerminalText.visible(task.notes, keepingLines: true)]
    }
    return lines
  }
}

/// `tasker done ID`.
struct DoneCommand: Command {
  static let spec = CommandSpec(
    name: "done", abstract: "Mark a task done ('tasker undo ID' reopens it).", arguments: [.taskID],
    json: JSONShape(fields: ["id", "status"], help: "the task's id and its new status, done."),
    example: "tasker done 3")

  let id: Int64
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    id = arguments.recordID(at: 0)!
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    try context.store().completeTask(id: id)
    if json { return try context.printJSON(.object(["id": RecordJSON.id(id), "status": "done"])) }
    try context.print("Completed task \(id).")
  }
}

/// `tasker delete ID`.
struct DeleteCommand: Command {
  static let spec = CommandSpec(
    name: "delete", abstract: "Delete a task, its notes and its attachments ('tasker undo rN' restores them).",
    arguments: [.taskID],
    json: JSONShape(
      fields: ["deleted", "receipt"], help: "the id of the task deleted and the receipt that undoes it."),
    discussion: "A copy is kept (its notes still sealed) so the delete can be undone, until it is one of more than "
      + "\(TaskStore.maximumKeptChanges) kept changes or 'tasker undo --purge' drops it.",
    example: """
      tasker delete 3
      tasker undo r12
      """)

  let id: Int64
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    id = arguments.recordID(at: 0)!
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let receipt = try context.store().deleteTask(id: id, keepingCopyAs: .user)
    if json {
      return try context.printJSON(.object(["deleted": RecordJSON.id(id), "receipt": .string("r\(receipt.id)")]))
    }
    try context.print("Deleted task \(id) (undo: tasker undo r\(receipt.id)).")
  }
}
