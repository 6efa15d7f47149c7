import CommandKit
import TaskerCore

/// The JSON of Tasker's records, the project's way (docs/json-output.md):
/// snake_case keys, ids as strings, RFC 3339 UTC times, every field present
/// (null when it has no value), one object at the top level.
enum RecordJSON {
  /// A record id: its decimal digits as a string.
  static func id(_ id: Int64) -> JSONValue { .string(String(id)) }

  /// An optional record id.
  static func id(_ id: Int64?) -> JSONValue { id.map { .string(String($0)) } ?? .null }

  /// The fields a task has in every listing.
  static let taskFields = [
    "id", "title", "status", "due", "overdue", "estimate_minutes", "priority", "energy", "contexts", "plan_order",
  ]

  /// What `show` adds to them.
  static let taskDetailFields =
    taskFields + ["created", "completed", "notes", "notes_locked", "attachments"]

  /// A task as `list` shows it.
  static func task(_ task: TaskSummary, today: CalendarDate) -> JSONValue {
    .object(
      fields(
        id: task.id, title: task.title, status: task.status, due: task.due, overdue: task.isOverdue(today: today),
        estimate: task.estimateMinutes, priority: task.priority, energy: task.energy, contexts: task.contexts,
        planOrder: task.planOrder))
  }

  /// A task with its dates, its notes (null while they are locked), its
  /// attachments and its place in the applied plan, as `show`, `add` and
  /// `edit` show it.
  static func task(
    _ task: TaskRecord, today: CalendarDate, notesLocked: Bool, attachments: [AttachmentRecord], planOrder: Int?
  ) -> JSONValue {
    var members = fields(
      id: task.id, title: task.title, status: task.status, due: task.due, overdue: task.isOverdue(today: today),
      estimate: task.estimateMinutes, priority: task.priority, energy: task.energy, contexts: task.contexts,
      planOrder: planOrder)
    members["created"] = TimeStamp.json(seconds: task.created)
    members["completed"] = TimeStamp.json(seconds: task.completed)
    members["notes"] = notesLocked ? .null : .string(task.notes)
    members["notes_locked"] = .bool(notesLocked)
    members["attachments"] = .array(attachments.map(attachment))
    return .object(members)
  }

  private static func fields(
    id: Int64, title: String, status: TaskStatus, due: CalendarDate?, overdue: Bool, estimate: Int?,
    priority: Priority, energy: Energy?, contexts: String, planOrder: Int?
  ) -> [String: JSONValue] {
    [
      "id": self.id(id), "title": .string(title), "status": .string(status.rawValue),
      "due": .optional(due?.description), "overdue": .bool(overdue), "estimate_minutes": .optional(estimate),
      "priority": .string(priority.name), "energy": .optional(energy?.name), "contexts": .string(contexts),
      "plan_order": .optional(planOrder),
    ]
  }

  /// The fields of an attachment.
  static let attachmentFields = ["id", "task_id", "page_id", "name", "byte_count", "media_type", "sealed"]

  /// An attachment's row (never its bytes).
  static func attachment(_ attachment: AttachmentRecord) -> JSONValue {
    .object([
      "id": id(attachment.id), "task_id": id(attachment.taskID), "page_id": id(attachment.pageID),
      "name": .string(attachment.name), "byte_count": .integer(attachment.byteCount),
      "media_type": .string(attachment.mediaType), "sealed": .bool(attachment.sealed),
    ])
  }

  /// The fields of a page in a listing.
  static let pageFields = ["id", "title", "updated"]

  /// A page as `page list` shows it.
  static func page(_ page: PageSummary) -> JSONValue {
    .object(["id": id(page.id), "title": .string(page.title), "updated": TimeStamp.json(seconds: page.updated)])
  }

  /// The fields of a page with its body.
  static let pageDetailFields = ["id", "title", "body", "body_locked", "created", "updated"]

  /// A page with its body (null while it is locked).
  static func page(_ page: Page, bodyLocked: Bool = false) -> JSONValue {
    .object([
      "id": id(page.id), "title": .string(page.title), "body": bodyLocked ? .null : .string(page.body),
      "body_locked": .bool(bodyLocked), "created": TimeStamp.json(seconds: page.created),
      "updated": TimeStamp.json(seconds: page.updated),
    ])
  }
}
