import CommandKit
import TaskerCore

/// One tool call of the gate, parsed and checked: what it would do, with
/// typed arguments. Built by `GateCall.parse`; nothing runs until the
/// decision allows it.
public enum GateCall: Equatable, Sendable {
  /// `list_tasks`.
  case listTasks(filter: TaskFilter, includeNotes: Bool, limit: Int)
  /// `search_tasks`.
  case searchTasks(query: String, includeNotes: Bool, limit: Int)
  /// `show_task`.
  case showTask(id: Int64, includeNotes: Bool)
  /// `add_task`.
  case addTask(TaskDraft)
  /// `edit_task` on one task or (a bulk edit) several.
  case editTasks(ids: [Int64], changes: TaskChanges)
  /// `complete_task`.
  case completeTask(id: Int64)
  /// `delete_task`.
  case deleteTask(id: Int64)
  /// `add_page`.
  case addPage(title: String, body: String)
  /// `read_note`.
  case readNote(id: Int64)

  /// The tool this call is of.
  public var tool: GateTool {
    switch self {
    case .listTasks: return .listTasks
    case .searchTasks: return .searchTasks
    case .showTask: return .showTask
    case .addTask: return .addTask
    case .editTasks: return .editTask
    case .completeTask: return .completeTask
    case .deleteTask: return .deleteTask
    case .addPage: return .addPage
    case .readNote: return .readNote
    }
  }

  /// What the decision weighs.
  public var action: GateAction {
    switch self {
    case .listTasks(_, let notes, _), .searchTasks(_, let notes, _), .showTask(_, let notes):
      return notes ? .readNotes : .readTasks
    case .readNote: return .readNotes
    case .addTask: return .addTask
    case .editTasks(let ids, _): return ids.count > 1 ? .bulkEdit : .editTask
    case .completeTask: return .completeTask
    case .deleteTask: return .deleteTask
    case .addPage: return .addPage
    }
  }

  /// True for every call that would read a note or seal one: the calls a
  /// locked vault refuses (note text, page bodies, and a delete, whose
  /// kept copy is sealed).
  public var touchesNotes: Bool {
    switch self {
    case .readNote, .deleteTask: return true
    case .listTasks(_, let notes, _), .searchTasks(_, let notes, _), .showTask(_, let notes): return notes
    case .addTask(let draft): return !draft.notes.isEmpty
    case .editTasks(_, let changes): return changes.notes != nil
    case .addPage(_, let body): return !body.isEmpty
    case .completeTask: return false
    }
  }

  /// The most tasks a listing returns, and the most one bulk edit changes.
  public static let maximumLimit = 500
  /// The most tasks one `edit_task` call changes.
  public static let maximumBulk = 100
  /// The longest title, in bytes of UTF-8 (500 ASCII characters).
  public static let maximumTitle = 500
  /// The longest search query, in bytes of UTF-8.
  public static let maximumQuery = 200
  /// The longest note text or page body, in bytes of UTF-8.
  public static let maximumBody = 256 * 1024

  /// Parses a `tools/call`'s name and arguments, refusing unknown tools,
  /// unknown arguments, wrong types and out-of-range values.
  ///
  /// - Parameters:
  ///   - tool: the tool name.
  ///   - arguments: the arguments object.
  /// - Returns: the call.
  /// - Throws: `MCPError` with code -32602 and a message naming the tool,
  ///   the argument and what it must be.
  public static func parse(tool name: String, arguments: [String: JSONValue]) throws(MCPError) -> GateCall {
    let unknown = MCPError(
      code: MCPError.invalidParamsCode,
      message: "unknown tool '\(name.prefix(64))'; tools/list names the tools this gate has")
    guard let tool = GateTool(rawValue: name), let spec = GateTools.catalog.first(where: { $0.name == name }) else {
      throw unknown
    }
    return try parse(tool, arguments: arguments, schema: spec.inputSchema, unknown: unknown)
  }

  /// Parses the arguments of a known tool; every tool is a case here, and
  /// one the gate does not offer (`undo`, `delete_page`: the command line's
  /// own) is refused as unknown.
  private static func parse(
    _ tool: GateTool, arguments: [String: JSONValue], schema: JSONValue, unknown: MCPError
  ) throws(MCPError) -> GateCall {
    let reader = try ArgumentReader(tool: tool.rawValue, arguments: arguments, schema: schema)
    switch tool {
    case .listTasks:
      let filter = TaskFilter(rawValue: try reader.string("status") ?? "open") ?? .open
      return .listTasks(
        filter: filter, includeNotes: try reader.bool("include_notes") ?? false, limit: try limit(reader))
    case .searchTasks:
      return .searchTasks(
        query: try reader.requiredString("query"), includeNotes: try reader.bool("include_notes") ?? false,
        limit: try limit(reader))
    case .showTask:
      return .showTask(id: try reader.id("id"), includeNotes: try reader.bool("include_notes") ?? false)
    case .addTask:
      var draft = TaskDraft(title: try reader.requiredString("title"))
      draft.notes = try reader.string("notes") ?? ""
      draft.due = try reader.date("due") ?? nil
      draft.estimateMinutes = try reader.integer("estimate_minutes").map(Int.init)
      draft.priority = (try reader.level("priority", Priority.self) ?? nil) ?? Priority.none
      draft.energy = try reader.level("energy", Energy.self) ?? nil
      draft.contexts = try reader.string("contexts") ?? ""
      return .addTask(draft)
    case .editTask:
      return .editTasks(ids: try reader.ids("ids"), changes: try changes(reader))
    case .completeTask: return .completeTask(id: try reader.id("id"))
    case .deleteTask: return .deleteTask(id: try reader.id("id"))
    case .addPage: return .addPage(title: try reader.requiredString("title"), body: try reader.string("body") ?? "")
    case .readNote: return .readNote(id: try reader.id("id"))
    case .deletePage, .undo: throw unknown
    }
  }

  private static func limit(_ reader: ArgumentReader) throws(MCPError) -> Int {
    Int(try reader.integer("limit") ?? 100)
  }

  private static func changes(_ reader: ArgumentReader) throws(MCPError) -> TaskChanges {
    var changes = TaskChanges()
    changes.title = try reader.string("title")
    changes.notes = try reader.string("notes")
    changes.due = try reader.date("due")
    if reader.has("estimate_minutes") {
      changes.estimateMinutes = .some(try reader.integer("estimate_minutes").map(Int.init))
    }
    changes.priority = try reader.level("priority", Priority.self) ?? nil
    changes.energy = try reader.level("energy", Energy.self)
    changes.contexts = try reader.string("contexts")
    guard !changes.isEmpty else {
      throw MCPError(code: MCPError.invalidParamsCode, message: "edit_task: give at least one field to change")
    }
    return changes
  }
}
