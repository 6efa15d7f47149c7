import CommandKit
import TaskCrypto
import TaskerCore

/// The field table of docs/formats/sync-storage.md: which fields each
/// kind has and what values they take.
enum SyncFieldRules {
  /// The task's fields.
  static let taskFields: Set<String> = [
    "title", "due", "estimate_minutes", "priority", "energy", "status", "completed_at", "contexts", "created_at",
  ]
  /// The page's fields.
  static let pageFields: Set<String> = ["title", "created_at", "updated_at"]

  /// The attachment's fields: all of them in every attachment record.
  static let attachmentFields: Set<String> = ["owner", "name", "media_type", "created_at", "content"]

  /// The fields of `kind`.
  static func fields(of kind: SyncRecord.Kind) -> Set<String> {
    switch kind {
    case .task: return taskFields
    case .page: return pageFields
    case .attachment: return attachmentFields
    }
  }

  /// Whether `value` is one the table allows for `field` of `kind`.
  ///
  /// - Throws: `SyncOutcome.malformedPayload` for a field the kind does not have.
  static func isValid(_ value: JSONValue, field: String, kind: SyncRecord.Kind) throws(SyncOutcome) -> Bool {
    guard fields(of: kind).contains(field) else { throw .malformedPayload }
    if kind == .attachment { return isValidAttachment(value, field: field) }
    switch (field, value) {
    case ("title", .string(let text)): return (1...65_536).contains(text.unicodeScalars.count)
    case ("contexts", .string(let text)): return text.unicodeScalars.count <= 65_536
    case ("due", .null), ("estimate_minutes", .null), ("energy", .null), ("completed_at", .null): return true
    case ("due", .string(let text)): return (try? CalendarDate(parsing: text)) != nil
    case ("estimate_minutes", .integer(let n)), ("completed_at", .integer(let n)), ("created_at", .integer(let n)),
      ("updated_at", .integer(let n)):
      return (0...SyncPayload.largestInteger).contains(n)
    case ("priority", .integer(let n)): return (0...3).contains(n)
    case ("energy", .integer(let n)): return (1...3).contains(n)
    case ("status", .string(let text)): return text == "open" || text == "done"
    default: return false
    }
  }

  /// Whether `value` is one the attachment table allows for `field`.
  static func isValidAttachment(_ value: JSONValue, field: String) -> Bool {
    switch (field, value) {
    case ("owner", .string(let text)):
      return SyncAttachmentContent.owner(text) != nil
    case ("name", .string(let text)), ("media_type", .string(let text)):
      return (1...255).contains(text.utf8.count) && !text.unicodeScalars.contains(where: SyncPayload.isControl)
    case ("created_at", .integer(let n)): return (0...SyncPayload.largestInteger).contains(n)
    case ("content", let content): return SyncAttachmentContent(content) != nil
    default: return false
    }
  }

  /// Whether `text` is a sealed value by the grammar of sealed-value.md
  /// (never plain text).
  static func isSealedValue(_ text: String) -> Bool {
    (try? SealedValue.parse(text)) != nil
  }
}
