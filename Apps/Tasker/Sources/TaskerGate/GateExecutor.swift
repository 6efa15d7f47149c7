import CommandKit
import FoundationEssentials
import TaskerCore

/// Runs a decided call against the store and says what it did: the
/// result for the assistant, a summary and target for the receipt (no
/// note text), and how to undo it.
struct GateExecutor {
  let store: TaskStore
  let today: CalendarDate
  /// Who an acting call's receipt names, with its decision (`allow`, or
  /// `approved` with the approval): a delete writes its receipt itself,
  /// bound to the copy it keeps.
  let author: ReceiptAuthor
  /// Whether the caller may read contexts (trusted mode, or a key with
  /// `notes:read`): only then does a search match on them. False unless
  /// said, so an executor made without it searches titles only.
  var mayReadContexts = false

  /// What running a call produced.
  struct Outcome {
    var content: JSONValue
    var summary: String
    var target: String = ""
    var undo: ReceiptUndo?
    /// The receipt the run wrote itself (a delete, whose kept copy names
    /// it), in the caller's transaction; nil when the caller writes it.
    var receipt: GateReceipt?
  }

  func run(_ call: GateCall) throws -> Outcome {
    switch call {
    case .listTasks(let filter, let notes, let limit):
      let tasks = try store.tasks(filter, limit: limit)
      return Outcome(
        content: ["tasks": .array(try tasks.map { try json($0, notes: notes) })], summary: "\(tasks.count) task(s)")
    case .searchTasks(let query, let notes, let limit):
      // Titles only for a caller who may not read contexts: which tasks
      // match, how many and in what order then never depend on contexts.
      let tasks = try store.searchTasks(query, matchingContexts: mayReadContexts, limit: limit)
      return Outcome(
        content: ["tasks": .array(try tasks.map { try json($0, notes: notes) })], summary: "\(tasks.count) task(s)")
    case .showTask(let id, let notes):
      let task = try store.task(id: id)
      return Outcome(content: ["task": notes ? full(task) : planning(task)], summary: "task \(id)")
    case .readNote(let id):
      return Outcome(
        content: ["id": .integer(id), "notes": .string(try store.notes(ofTask: id))], summary: "note of task \(id)")
    case .addTask(let draft):
      let task = try store.addTask(draft)
      return Outcome(
        content: ["task": planning(task)], summary: "added task \(task.id) '\(task.title)'", target: "task/\(task.id)",
        undo: ReceiptUndo(.deleteTask, task.id))
    case .editTasks(let ids, let changes):
      var edited: [JSONValue] = []
      for id in ids { edited.append(planning(try store.editTask(id: id, changes))) }
      let names = ids.map(String.init).joined(separator: ", ")
      return Outcome(
        content: ["tasks": .array(edited)], summary: "edited task(s) \(names): \(Self.fields(changes))",
        target: ids.count == 1 ? "task/\(ids[0])" : "tasks/\(names.replacing(", ", with: ","))")
    case .completeTask(let id):
      let before = try store.task(id: id)
      try store.completeTask(id: id)
      let after = try store.task(id: id)
      return Outcome(
        content: ["task": planning(after)], summary: "completed task \(id) '\(after.title)'", target: "task/\(id)",
        undo: before.status == .open ? ReceiptUndo(.reopenTask, id) : nil)
    case .deleteTask(let id):
      // Undoable as the user's own delete: the row (notes as stored, never
      // opened) and its attachments are kept, bound to this receipt.
      let written = try store.deleteTask(id: id, keepingCopyAs: author)
      return Outcome(
        content: ["deleted": .integer(id)], summary: written.summary, target: written.target, undo: written.undo,
        receipt: written)
    case .addPage(let title, let body):
      let page = try store.addPage(title: title, body: body)
      return Outcome(
        content: ["page": ["id": .integer(page.id), "title": .string(page.title)]],
        summary: "added page \(page.id) '\(page.title)'", target: "page/\(page.id)",
        undo: ReceiptUndo(.deletePage, page.id))
    }
  }

  /// A task with the planning fields only: id, status, title, estimate,
  /// due date, priority, energy and overdue. No free text but the title.
  func planning(_ task: TaskRecord) -> JSONValue {
    planning(
      id: task.id, status: task.status, title: task.title, estimate: task.estimateMinutes, due: task.due,
      priority: task.priority, energy: task.energy)
  }

  private func json(_ task: TaskSummary, notes: Bool) throws -> JSONValue {
    if notes { return full(try store.task(id: task.id)) }
    return planning(
      id: task.id, status: task.status, title: task.title, estimate: task.estimateMinutes, due: task.due,
      priority: task.priority, energy: task.energy)
  }

  /// The six `PlanCandidate` fields (`PlanCandidate.jsonMembers`, so the
  /// list cannot grow here) plus the id and status an assistant needs to act.
  private func planning(
    id: Int64, status: TaskStatus, title: String, estimate: Int?, due: CalendarDate?, priority: Priority,
    energy: Energy?
  ) -> JSONValue {
    let candidate = PlanCandidate(
      title: title, estimateMinutes: estimate, due: due, priority: priority, energy: energy,
      overdue: status == .open && due.map { $0 < today } ?? false)
    var members = candidate.jsonMembers
    members["id"] = .integer(id)
    members["status"] = .string(status.rawValue)
    return .object(members)
  }

  private func full(_ task: TaskRecord) -> JSONValue {
    guard case .object(var members) = planning(task) else { return planning(task) }
    members["notes"] = .string(task.notes)
    members["contexts"] = .string(task.contexts)
    members["created"] = .integer(task.created)
    members["completed"] = task.completed.map { .integer($0) } ?? .null
    return .object(members)
  }

  /// The names of the fields a change touches (never their values).
  static func fields(_ changes: TaskChanges) -> String {
    var names: [String] = []
    if changes.title != nil { names.append("title") }
    if changes.notes != nil { names.append("notes") }
    if changes.due != nil { names.append("due") }
    if changes.estimateMinutes != nil { names.append("estimate_minutes") }
    if changes.priority != nil { names.append("priority") }
    if changes.energy != nil { names.append("energy") }
    if changes.contexts != nil { names.append("contexts") }
    return names.joined(separator: ", ")
  }
}
