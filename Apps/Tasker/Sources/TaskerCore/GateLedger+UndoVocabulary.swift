/// The undo words of a receipt (receipt.md, *undo*), split from
/// GateLedger+Vocabulary.swift.

/// How a receipt's change is undone. The raw value is the word before the
/// colon of the receipt's `undo` (`delete-task:<id>`).
public enum UndoKind: String, CaseIterable, Sendable {
  /// Delete the task an `add_task` added.
  case deleteTask = "delete-task"
  /// Delete the page an `add_page` added.
  case deletePage = "delete-page"
  /// Reopen the task a `complete_task` completed.
  case reopenTask = "reopen-task"
  /// Put back the task a `delete_task` deleted, from the kept copy.
  case restoreTask = "restore-task"
  /// Put back the page a `delete_page` deleted, from the kept copy.
  case restorePage = "restore-page"
  /// Put back the fields an `edit_task` of one task changed, from the kept copy.
  case revertEdit = "revert-edit"

  /// The tool whose receipt carries this undo.
  public var tool: GateTool {
    switch self {
    case .deleteTask: return .addTask
    case .deletePage: return .addPage
    case .reopenTask: return .completeTask
    case .restoreTask: return .deleteTask
    case .restorePage: return .deletePage
    case .revertEdit: return .editTask
    }
  }

  /// Whether it puts back a copy kept in `gate_undo_*` (restore, revert).
  public var usesKeptCopy: Bool {
    switch self {
    case .deleteTask, .deletePage, .reopenTask: return false
    case .restoreTask, .restorePage, .revertEdit: return true
    }
  }

  /// The undo a receipt of `tool` must carry when its call ran: true for
  /// additions (which always can be undone); false when it may carry none
  /// (a completion of a done task, and deletes and edits from before
  /// undo kept copies).
  public var isRequired: Bool { self == .deleteTask || self == .deletePage }

  /// The undo kind of a tool, if its receipts can carry one.
  public static func of(_ tool: GateTool) -> UndoKind? {
    allCases.first { $0.tool == tool }
  }
}

/// A receipt's `undo`: the kind and the record's id, `<kind>:<id>`.
public struct ReceiptUndo: Hashable, Sendable, RawRepresentable {
  /// How to undo.
  public let kind: UndoKind
  /// The task or page id.
  public let id: Int64

  /// An undo of `kind` for record `id`.
  ///
  /// - Parameters:
  ///   - kind: how to undo.
  ///   - id: the task or page, at least 1.
  public init(_ kind: UndoKind, _ id: Int64) {
    self.kind = kind
    self.id = id
  }

  /// Reads `<kind>:<id>`, the id canonical decimal 1 to 2^63-1; nil for
  /// anything else.
  ///
  /// - Parameter rawValue: the stored text.
  public init?(rawValue: String) {
    let parts = rawValue.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2, let kind = UndoKind(rawValue: String(parts[0])), let id = GateReceipt.id(parts[1])
    else { return nil }
    self.init(kind, id)
  }

  /// `<kind>:<id>`.
  public var rawValue: String { "\(kind.rawValue):\(id)" }
}
