import CommandKit
import TaskerCore

/// The gate's tools: names, descriptions and complete input schemas. The
/// schemas are also what `ArgumentReader` checks arguments against, so
/// what `tools/list` promises and what a call accepts cannot drift apart.
public enum GateTools {
  private static let id: JSONValue = ["type": "integer", "minimum": 1, "description": "The task's id."]
  private static let includeNotes: JSONValue = [
    "type": "boolean", "default": false,
    "description": "Include note text and contexts. Needs the key's notes:read grant.",
  ]
  private static let limit: JSONValue = [
    "type": "integer", "minimum": 1, "maximum": .integer(Int64(GateCall.maximumLimit)), "default": 100,
    "description": "The most tasks to return.",
  ]
  private static let title: JSONValue = [
    "type": "string", "minLength": 1, "maxLength": .integer(Int64(GateCall.maximumTitle)),
  ]
  private static let body: JSONValue = ["type": "string", "maxLength": .integer(Int64(GateCall.maximumBody))]
  private static let date: JSONValue = [
    "type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "description": "A day, YYYY-MM-DD.",
  ]
  private static let estimate: JSONValue = [
    "type": "integer", "minimum": 0, "maximum": 100_000, "description": "Minutes.",
  ]
  private static let priority: JSONValue = ["type": "string", "enum": ["none", "low", "medium", "high"]]
  private static let energy: JSONValue = ["type": "string", "enum": ["low", "medium", "high"]]
  private static let contexts: JSONValue = [
    "type": "string", "maxLength": 1_000, "description": "Contexts and tags as free text, e.g. '@home errands'.",
  ]

  private static func object(_ properties: [String: JSONValue], required: [String] = []) -> JSONValue {
    [
      "type": "object", "properties": .object(properties), "required": .array(required.map { .string($0) }),
      "additionalProperties": false,
    ]
  }

  private static func nullable(_ schema: JSONValue) -> JSONValue {
    guard case .object(var members) = schema, case .string(let type)? = members["type"] else { return schema }
    members["type"] = [.string(type), "null"]
    if case .array(let values)? = members["enum"] { members["enum"] = .array(values + [.null]) }
    return .object(members)
  }

  /// The grant an assistant's key needs to call each tool, or nil when any
  /// valid key may (the grant of the tool's action, `GateAction.requiredGrant`;
  /// `include_notes` on a read asks for `notes:read` on top, per call).
  public static let requiredGrants: [String: GateGrant?] = [
    "list_tasks": nil, "search_tasks": nil, "show_task": nil, "add_task": .tasksWrite, "edit_task": .tasksWrite,
    "complete_task": .tasksWrite, "delete_task": .tasksWrite, "add_page": .pagesWrite, "read_note": .notesRead,
  ]

  /// The tools an assistant whose key holds `grants` may call, in catalog
  /// order: those needing no grant and those whose grant it holds. A tool
  /// missing from `requiredGrants` is listed to no assistant (fail closed).
  ///
  /// - Parameter grants: the key's gate grants.
  public static func catalog(for grants: Set<GateGrant>) -> [MCPTool] {
    catalog.filter { tool in
      guard let needed = requiredGrants[tool.name] else { return false }
      return needed.map(grants.contains) ?? true
    }
  }

  /// Every tool, in `tools/list` order.
  public static let catalog: [MCPTool] = [
    MCPTool(
      name: "list_tasks", title: "List tasks",
      description:
        "List tasks by status. Without include_notes each task has only id, status and the planning fields "
        + "(title, estimate, due date, priority, energy, overdue).",
      inputSchema: object([
        "status": ["type": "string", "enum": ["open", "done", "all"], "default": "open"],
        "include_notes": includeNotes, "limit": limit,
      ]), readOnly: true, destructive: false),
    MCPTool(
      name: "search_tasks", title: "Search tasks",
      description:
        "Find tasks whose title contains the text (and, for a key with notes:read, whose contexts do). "
        + "Results have the same fields as list_tasks.",
      inputSchema: object(
        [
          "query": ["type": "string", "minLength": 1, "maxLength": .integer(Int64(GateCall.maximumQuery))],
          "include_notes": includeNotes,
          "limit": limit,
        ], required: ["query"]), readOnly: true, destructive: false),
    MCPTool(
      name: "show_task", title: "Show a task",
      description: "Show one task: the planning fields, or every field with include_notes (needs notes:read).",
      inputSchema: object(["id": id, "include_notes": includeNotes], required: ["id"]), readOnly: true,
      destructive: false),
    MCPTool(
      name: "add_task", title: "Add a task",
      description: "Add a task. Needs the tasks:write grant. Leaves a receipt that 'tasker undo' can reverse.",
      inputSchema: object(
        [
          "title": title, "notes": body, "due": date, "estimate_minutes": estimate, "priority": priority,
          "energy": energy, "contexts": contexts,
        ], required: ["title"]), readOnly: false, destructive: false),
    MCPTool(
      name: "edit_task", title: "Edit tasks",
      description:
        "Change fields of one task, or of several at once (a bulk edit, which may wait for the user's approval). "
        + "null clears an optional field. Needs tasks:write.",
      inputSchema: object(
        [
          "ids": [
            "type": "array", "items": id, "minItems": 1, "maxItems": .integer(Int64(GateCall.maximumBulk)),
            "uniqueItems": true,
          ],
          "title": title, "notes": body, "due": nullable(date), "estimate_minutes": nullable(estimate),
          "priority": priority, "energy": nullable(energy), "contexts": contexts,
        ], required: ["ids"]), readOnly: false, destructive: false),
    MCPTool(
      name: "complete_task", title: "Complete a task",
      description: "Mark a task done. Needs tasks:write. Leaves a receipt that 'tasker undo' can reverse.",
      inputSchema: object(["id": id], required: ["id"]), readOnly: false, destructive: false),
    MCPTool(
      name: "delete_task", title: "Delete a task",
      description: "Delete a task. Needs tasks:write; an assistant's delete always waits for the user's approval.",
      inputSchema: object(["id": id], required: ["id"]), readOnly: false, destructive: true),
    MCPTool(
      name: "add_page", title: "Add a page",
      description: "Add a page with a title and a body. Needs the pages:write grant.",
      inputSchema: object(["title": title, "body": body], required: ["title"]), readOnly: false, destructive: false),
    MCPTool(
      name: "read_note", title: "Read a task's note",
      description: "Return a task's note text. Needs the notes:read grant.",
      inputSchema: object(["id": id], required: ["id"]), readOnly: true, destructive: false),
  ]
}

/// Checks a call's arguments against its tool's input schema (the subset
/// of JSON Schema the catalog uses: type, enum, minimum, maximum,
/// minLength, maxLength, pattern for dates, items, minItems, maxItems,
/// uniqueItems, required, additionalProperties false), then reads them.
struct ArgumentReader {
  let tool: String
  let arguments: [String: JSONValue]

  init(tool: String, arguments: [String: JSONValue], schema: JSONValue) throws(MCPError) {
    self.tool = tool
    self.arguments = arguments
    let properties = schema["properties"]?.objectValue ?? [:]
    if let unknown = arguments.keys.sorted().first(where: { properties[$0] == nil }) {
      throw fail("unknown argument '\(unknown.prefix(64))'; the arguments are \(properties.keys.sorted())")
    }
    if case .array(let required)? = schema["required"] {
      for case .string(let name) in required where arguments[name] == nil {
        throw fail("the argument '\(name)' is required")
      }
    }
    for (name, value) in arguments { try check(value, against: properties[name] ?? [:], name: name) }
  }

  private func fail(_ message: String) -> MCPError {
    MCPError(code: MCPError.invalidParamsCode, message: "\(tool): \(message)")
  }

  private func check(_ value: JSONValue, against schema: JSONValue, name: String) throws(MCPError) {
    let types: [String]
    switch schema["type"] {
    case .string(let type)?: types = [type]
    case .array(let list)?: types = list.compactMap(\.stringValue)
    default: types = []
    }
    let kind = Self.kind(of: value)
    guard types.contains(kind) || (kind == "integer" && types.contains("number")) else {
      throw fail("'\(name)' must be \(types.joined(separator: " or ")), not \(kind)")
    }
    if case .array(let allowed)? = schema["enum"], !allowed.contains(value) {
      throw fail("'\(name)' must be one of \(allowed.map(\.text).joined(separator: ", "))")
    }
    switch value {
    case .integer(let number):
      if let minimum = schema["minimum"]?.integerValue, number < minimum {
        throw fail("'\(name)' must be ≥ \(minimum)")
      }
      if let maximum = schema["maximum"]?.integerValue, number > maximum {
        throw fail("'\(name)' must be ≤ \(maximum)")
      }
    case .string(let text):
      if let minimum = schema["minLength"]?.integerValue, text.count < minimum {
        throw fail("'\(name)' must not be empty")
      }
      // Bytes of UTF-8, counted before anything is stored or searched: a
      // character is one to 4 bytes, a grapheme cluster any number of them.
      // (JSON Schema's maxLength counts code points; a text within this
      // many bytes is within as many code points, so the schema holds.)
      if let maximum = schema["maxLength"]?.integerValue, text.utf8.count > maximum {
        throw fail("'\(name)' is longer than \(maximum) bytes of UTF-8")
      }
      if schema["pattern"] != nil {
        do {
          _ = try CalendarDate(parsing: text)
        } catch {
          throw fail("'\(name)' must be a calendar day written YYYY-MM-DD")
        }
      }
    case .array(let items):
      if let minimum = schema["minItems"]?.integerValue, items.count < minimum {
        throw fail("'\(name)' needs at least \(minimum) item(s)")
      }
      if let maximum = schema["maxItems"]?.integerValue, items.count > maximum {
        throw fail("'\(name)' takes at most \(maximum) items")
      }
      if schema["uniqueItems"] == true, Set(items.map(\.text)).count != items.count {
        throw fail("'\(name)' must not repeat an item")
      }
      for item in items { try check(item, against: schema["items"] ?? [:], name: name + "[]") }
    default: break
    }
  }

  private static func kind(of value: JSONValue) -> String {
    switch value {
    case .null: return "null"
    case .bool: return "boolean"
    case .integer: return "integer"
    case .number: return "number"
    case .string: return "string"
    case .array: return "array"
    case .object: return "object"
    }
  }

  func has(_ name: String) -> Bool { arguments[name] != nil }

  func string(_ name: String) throws(MCPError) -> String? { arguments[name]?.stringValue }

  func requiredString(_ name: String) throws(MCPError) -> String {
    guard let text = arguments[name]?.stringValue else { throw fail("the argument '\(name)' is required") }
    return text
  }

  func bool(_ name: String) throws(MCPError) -> Bool? {
    if case .bool(let flag)? = arguments[name] { return flag }
    return nil
  }

  func integer(_ name: String) throws(MCPError) -> Int64? { arguments[name]?.integerValue }

  func id(_ name: String) throws(MCPError) -> Int64 {
    guard let value = arguments[name]?.integerValue else { throw fail("the argument '\(name)' is required") }
    return value
  }

  func ids(_ name: String) throws(MCPError) -> [Int64] {
    guard case .array(let items)? = arguments[name] else { throw fail("the argument '\(name)' is required") }
    return items.compactMap(\.integerValue)
  }

  /// A date: nil when absent, `.some(nil)` when null.
  func date(_ name: String) throws(MCPError) -> CalendarDate?? {
    guard let value = arguments[name] else { return nil }
    guard let text = value.stringValue else { return .some(nil) }
    do {
      return .some(try CalendarDate(parsing: text))
    } catch {
      throw fail("'\(name)' must be a calendar day written YYYY-MM-DD")
    }
  }

  /// A level word: nil when absent, `.some(nil)` when null.
  func level<Level: NamedLevel>(_ name: String, _ type: Level.Type) throws(MCPError) -> Level?? {
    guard let value = arguments[name] else { return nil }
    guard let text = value.stringValue else { return .some(nil) }
    do {
      return .some(try Level(parsing: text))
    } catch {
      throw fail("'\(name)' must be one of \(Level.allCases.map(\.name).joined(separator: ", "))")
    }
  }
}
