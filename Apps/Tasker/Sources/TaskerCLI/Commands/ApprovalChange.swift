import CommandKit
import TaskerCore
import TaskerGate

/// The full change a queued call asks for, for `tasker approvals list`:
/// per record, each field's current value beside the requested one, built
/// from the call's own arguments (not from its one-line summary, which an
/// assistant's text could make read as another change). Note text and
/// page bodies are shown in full: their length, then every line of the
/// text on a line of its own, indented and made visible.
struct ApprovalChange {
  /// One value of a field.
  enum Value: Equatable {
    /// Text a user or an assistant wrote (a title, contexts).
    case text(String)
    /// A word or number Tasker spells itself (a day, a priority).
    case word(String)
    /// Note text or a page body: its length in bytes, then its full text.
    case body(String)
    /// No value (not set, or not shown).
    case none
  }

  /// One field of a record: what it holds now and what the call asks for.
  struct Field: Equatable {
    /// The field's name, as in `tasker show --json`.
    var name: String
    /// Its value now; `.none` for a record the call would add.
    var current: Value
    /// The value asked for; `.none` for a record the call would delete.
    var requested: Value
  }

  /// One record the call touches.
  struct Record: Equatable {
    /// What the call does to it, in Tasker's words: `add task`, `edit
    /// task 3`, `delete task 3`, `complete task 3`, `add page`.
    var action: String
    /// The task's id, or nil for a record the call would add.
    var taskID: Int64?
    /// Its fields.
    var fields: [Field]
  }

  /// The records, in the call's order; empty when `unreadable`.
  var records: [Record] = []
  /// Why the arguments could not be shown (sealed under a key that is not
  /// at hand, or not a call), or nil.
  var unreadable: String?

  /// The change `approval` asks for, with the tasks' current fields read
  /// from `store` (without opening notes). The arguments are opened
  /// through `open`; when that fails the change is `unreadable` and says why.
  static func of(_ approval: GateApproval, store: TaskStore, open: (Int64) throws -> String) -> ApprovalChange {
    let text: String
    do {
      text = try open(approval.id)
    } catch {
      let report = FailureReport(error)
      return ApprovalChange(unreadable: "its arguments cannot be opened: " + (report.message ?? "\(report.code)"))
    }
    guard case .object(let arguments)? = JSONValue.parse(Array(text.utf8)),
      let call = try? GateCall.parse(tool: approval.tool.rawValue, arguments: arguments)
    else { return ApprovalChange(unreadable: "its arguments are not a call Tasker can show") }
    return ApprovalChange(records: records(of: call, store: store))
  }

  private static func records(of call: GateCall, store: TaskStore) -> [Record] {
    func current(_ id: Int64) -> TaskRecord? { try? store.task(id: id, openingNotes: false) }
    switch call {
    case .addTask(let draft):
      let fields = [
        ("title", Value.text(draft.title)), ("due", day(draft.due)),
        ("estimate_minutes", number(draft.estimateMinutes)),
        ("priority", .word(draft.priority.name)), ("energy", .word(draft.energy?.name ?? "none")),
        ("contexts", .text(draft.contexts)), ("notes", .body(draft.notes)),
      ]
      return [Record(action: "add task", fields: fields.map { Field(name: $0.0, current: .none, requested: $0.1) })]
    case .editTasks(let ids, let changes):
      return ids.map { id in
        let task = current(id)
        var fields = [Field]()
        func add(_ name: String, _ now: Value, _ asked: Value?) {
          if let asked { fields.append(Field(name: name, current: task == nil ? .none : now, requested: asked)) }
        }
        add("title", .text(task?.title ?? ""), changes.title.map(Value.text))
        add("due", day(task?.due), changes.due.map(day))
        add("estimate_minutes", number(task?.estimateMinutes), changes.estimateMinutes.map(number))
        add("priority", .word(task?.priority.name ?? ""), changes.priority.map { .word($0.name) })
        add("energy", .word(task?.energy?.name ?? "none"), changes.energy.map { .word($0?.name ?? "none") })
        add("contexts", .text(task?.contexts ?? ""), changes.contexts.map(Value.text))
        add("notes", .none, changes.notes.map(Value.body))
        return Record(action: "edit task \(id)", taskID: id, fields: fields)
      }
    case .deleteTask(let id), .completeTask(let id):
      let deleting = call.tool == .deleteTask
      let task = current(id)
      let now: [(String, Value)] = [
        ("title", task.map { .text($0.title) } ?? .none), ("due", day(task?.due)),
        ("status", task.map { .word($0.status.rawValue) } ?? .none),
      ]
      let fields = now.map { name, value in
        Field(
          name: name, current: value,
          requested: deleting ? .none : name == "status" ? .word(TaskStatus.done.rawValue) : value)
      }
      return [Record(action: (deleting ? "delete task " : "complete task ") + "\(id)", taskID: id, fields: fields)]
    case .addPage(let title, let body):
      return [
        Record(
          action: "add page",
          fields: [
            Field(name: "title", current: .none, requested: .text(title)),
            Field(name: "body", current: .none, requested: .body(body)),
          ])
      ]
    case .listTasks, .searchTasks, .showTask, .readNote:
      return []
    }
  }

  private static func day(_ date: CalendarDate?) -> Value { date.map { .word($0.description) } ?? .none }
  private static func number(_ value: Int?) -> Value { value.map { .word(String($0)) } ?? .none }

  /// The first line of a body, and its length in bytes of UTF-8.
  static func firstLine(_ body: String) -> (line: String, bytes: Int) {
    let line = body.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
    return (line, body.utf8.count)
  }

  // MARK: - Output

  /// What starts each line of a requested body's text: two tabs (a
  /// field's line starts with one, an approval's row with `#`) and a bar.
  static let bodyIndent = "\t\t| "

  /// The lines printed under the approval's row: each starts with a tab
  /// (so none reads as an approval's `#N` row) and every value is made
  /// visible by `TerminalText`, so no text can add a line or a column. A
  /// requested body's field line gives its length; the text follows, one
  /// line of it per printed line after `bodyIndent`, each line made
  /// visible on its own (a tab or carriage return in it is escaped).
  var lines: [String] {
    if let unreadable { return ["\t(the change cannot be shown: \(TerminalText.visible(unreadable)))"] }
    return records.flatMap { record in
      record.fields.flatMap { field -> [String] in
        var line = "\t\(record.action)\t\(field.name)"
        if record.taskID != nil { line += "\tnow " + Self.shown(field.current) }
        guard !record.action.hasPrefix("complete") || field.name == "status" else { return [line] }
        guard !record.action.hasPrefix("delete") else { return [line + "\trequested (deleted)"] }
        line += "\trequested " + Self.shown(field.requested)
        guard case .body(let body) = field.requested else { return [line] }
        return [line] + Self.textLines(body).map { Self.bodyIndent + TerminalText.visible($0) }
      }
    }
  }

  /// A body's lines, split at each newline; a final newline ends the last
  /// line rather than starting an empty one, and an empty body has none.
  static func textLines(_ body: String) -> [String] {
    var lines = body.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if lines.last == "" { lines.removeLast() }
    return lines
  }

  private static func shown(_ value: Value) -> String {
    switch value {
    case .text(let text): return "'" + TerminalText.visible(text) + "'"
    case .word(let word): return TerminalText.visible(word)
    case .body(let body):
      let count = textLines(body).count
      return "\(body.utf8.count) bytes, \(count) line\(count == 1 ? "" : "s")\(count == 0 ? "" : ":")"
    case .none: return "none"
    }
  }

  /// The change in the project's JSON: `records`, each with `action`,
  /// `task_id` and `fields` (`name`, `current`, `requested`; a body as
  /// `bytes`, `first_line` and `text`, the full text), and `unreadable`
  /// (null, or why).
  var json: JSONValue {
    .object([
      "records": .array(
        records.map { record in
          .object([
            "action": .string(record.action), "task_id": RecordJSON.id(record.taskID),
            "fields": .array(
              record.fields.map {
                .object([
                  "name": .string($0.name), "current": Self.json($0.current), "requested": Self.json($0.requested),
                ])
              }),
          ])
        }),
      "unreadable": .optional(unreadable),
    ])
  }

  private static func json(_ value: Value) -> JSONValue {
    switch value {
    case .text(let text), .word(let text): return .string(text)
    case .body(let body):
      let (line, bytes) = firstLine(body)
      return .object(["bytes": .int(bytes), "first_line": .string(line), "text": .string(body)])
    case .none: return .null
    }
  }
}
