/// The gate's vocabulary as types: who acted, which tool, what was
/// decided, and how to undo it. Each is stored in `gate_receipts` by its
/// raw value (the words docs/formats/receipt.md names) and read back
/// through its failable initialiser; a word no case has is an error naming
/// the receipt, never a default.

/// Who a receipt is from.
public enum GateActor: String, CaseIterable, Sendable {
  /// The user's own process on stdio without a key (trusted mode).
  case trusted
  /// An assistant whose key verified.
  case assistant
  /// The user at the command line: an approval's denial, an undo, or the
  /// user's own undoable change (a delete or an edit).
  case user

  /// The decisions this actor makes (rule 5 of receipt.md).
  public var decisions: [GateDecisionKind] {
    switch self {
    case .trusted: return [.allow]
    case .assistant: return [.allow, .ask, .refuse, .approved]
    case .user: return [.changed, .denied, .undone]
    }
  }
}

/// A tool of the gate, or a change of the command line that leaves a
/// receipt. The raw value is the name `tools/list` and receipts use.
public enum GateTool: String, CaseIterable, Sendable {
  /// `list_tasks`: list tasks by status.
  case listTasks = "list_tasks"
  /// `search_tasks`: find tasks by title or contexts.
  case searchTasks = "search_tasks"
  /// `show_task`: one task.
  case showTask = "show_task"
  /// `add_task`.
  case addTask = "add_task"
  /// `edit_task`: one task, or several (a bulk edit).
  case editTask = "edit_task"
  /// `complete_task`.
  case completeTask = "complete_task"
  /// `delete_task`.
  case deleteTask = "delete_task"
  /// `add_page`.
  case addPage = "add_page"
  /// `read_note`: a task's note text.
  case readNote = "read_note"
  /// `delete_page`: the user's own `tasker page delete`; no gate tool.
  case deletePage = "delete_page"
  /// `undo`: the user's `tasker undo`; no gate tool.
  case undo

  /// Whether a receipt may name this tool: the tools that change data,
  /// and `undo`. Reading tools leave no receipt.
  public var leavesReceipts: Bool {
    switch self {
    case .listTasks, .searchTasks, .showTask, .readNote: return false
    case .addTask, .editTask, .completeTask, .deleteTask, .addPage, .deletePage, .undo: return true
    }
  }

  /// Every tool a receipt may name, in declaration order.
  public static var receiptTools: [GateTool] { allCases.filter(\.leavesReceipts) }

  /// Whether the user's own command-line change (decision `changed`) may
  /// name this tool: a delete or an edit of a task, a delete of a page.
  public var isUserChange: Bool {
    switch self {
    case .editTask, .deleteTask, .deletePage: return true
    case .listTasks, .searchTasks, .showTask, .addTask, .completeTask, .addPage, .readNote, .undo: return false
    }
  }

  /// Whether only the user's own change (decision `changed`) may name
  /// this tool: `delete_page`, which no gate tool offers.
  public var isUserOnly: Bool {
    switch self {
    case .deletePage: return true
    case .listTasks, .searchTasks, .showTask, .addTask, .editTask, .completeTask, .deleteTask, .addPage, .readNote,
      .undo:
      return false
    }
  }

  /// The prefix of the target a receipt of this tool names when its call
  /// ran: `page/` for the page tools, `task/` for the others.
  public var targetPrefix: String {
    switch self {
    case .addPage, .deletePage: return "page/"
    case .listTasks, .searchTasks, .showTask, .addTask, .editTask, .completeTask, .deleteTask, .readNote, .undo:
      return "task/"
    }
  }
}

/// Why a call waits for the user's approval.
public enum AskReason: String, CaseIterable, Equatable, Sendable {
  /// The action is risky for this trust level (delete, bulk edit, or any
  /// action of a restricted key).
  case risky
  /// It is quiet hours.
  case quietHours = "quiet-hours"
  /// Whether it is quiet hours could not be decided.
  case quietHoursUndecidable = "quiet-hours-undecidable"
}

/// Why a receipt's call was refused, as the receipt records it.
public enum ReceiptRefusal: Hashable, Sendable, RawRepresentable {
  /// The key lacked a grant: `missing-grant:<grant>`, where the grant is
  /// 1–64 characters of `a-z 0-9 . _ : -`, the first `a-z` (a grant this
  /// build does not know is still a well-formed word).
  case missingGrant(String)
  /// `budget-exhausted`.
  case budgetExhausted
  /// `budget-undecidable`.
  case budgetUndecidable

  /// The refusals without a free part, for the schema's list of words.
  public static let fixedCases: [ReceiptRefusal] = [.budgetExhausted, .budgetUndecidable]

  /// The longest grant word.
  public static let maximumGrantLength = 64

  /// Reads a refusal word; nil for anything else.
  ///
  /// - Parameter rawValue: `missing-grant:<grant>`, `budget-exhausted` or
  ///   `budget-undecidable`.
  public init?(rawValue: String) {
    switch rawValue {
    case "budget-exhausted": self = .budgetExhausted
    case "budget-undecidable": self = .budgetUndecidable
    default:
      let prefix = "missing-grant:"
      guard rawValue.hasPrefix(prefix) else { return nil }
      let grant = String(rawValue.dropFirst(prefix.count))
      guard Self.isGrant(grant) else { return nil }
      self = .missingGrant(grant)
    }
  }

  /// The refusal word.
  public var rawValue: String {
    switch self {
    case .missingGrant(let grant): return "missing-grant:" + grant
    case .budgetExhausted: return "budget-exhausted"
    case .budgetUndecidable: return "budget-undecidable"
    }
  }

  /// Whether `text` is a grant word as receipts write it.
  static func isGrant(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    let allowed = Array("abcdefghijklmnopqrstuvwxyz0123456789._:-".utf8)
    return (1...maximumGrantLength).contains(bytes.count) && (97...122).contains(bytes[0])
      && bytes.allSatisfy(allowed.contains)
  }
}

/// The kind of a decision, without its reason: what rule 5 to 9 of
/// receipt.md look at.
public enum GateDecisionKind: String, CaseIterable, Hashable, Sendable {
  /// The call ran.
  case allow
  /// The call was queued for approval.
  case ask
  /// The call was refused.
  case refuse
  /// The user approved a queued call and it ran.
  case approved
  /// The user denied a queued call.
  case denied
  /// The user undid a receipt.
  case undone
  /// The user's own change at the command line (a delete or an edit),
  /// recorded so that it can be undone.
  case changed

  /// Whether the call it records ran (and may carry an undo).
  public var ran: Bool {
    switch self {
    case .allow, .approved, .changed: return true
    case .ask, .refuse, .denied, .undone: return false
    }
  }

  /// Whether a receipt of this kind belongs to an approval (rule 9).
  public var hasApproval: Bool {
    switch self {
    case .ask, .approved, .denied: return true
    case .allow, .refuse, .undone, .changed: return false
    }
  }

  /// The kinds of a call that ran, as the schema lists them.
  public static var ranCases: [GateDecisionKind] { allCases.filter(\.ran) }
}

/// What a receipt records as decided, stored as its word (`allow`,
/// `ask:<reason>`, `refuse:<reason>`, `approved`, `denied`, `undone`).
public enum ReceiptDecision: Hashable, Sendable, RawRepresentable {
  /// The call ran.
  case allow
  /// The call was queued for the user's approval; nothing ran.
  case ask(AskReason)
  /// The call was refused; nothing ran or was queued.
  case refuse(ReceiptRefusal)
  /// The user approved a queued call and it ran, as the assistant that asked.
  case approved
  /// The user denied a queued call.
  case denied
  /// The user undid an earlier receipt.
  case undone
  /// The user's own change at the command line, which can be undone.
  case changed

  /// Reads a decision word; nil for anything else.
  ///
  /// - Parameter rawValue: a decision word of receipt.md.
  public init?(rawValue: String) {
    let parts = rawValue.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    guard let kind = GateDecisionKind(rawValue: String(parts[0])) else { return nil }
    switch (kind, parts.count == 2 ? String(parts[1]) : nil) {
    case (.allow, nil): self = .allow
    case (.approved, nil): self = .approved
    case (.denied, nil): self = .denied
    case (.undone, nil): self = .undone
    case (.changed, nil): self = .changed
    case (.ask, let reason?):
      guard let ask = AskReason(rawValue: reason) else { return nil }
      self = .ask(ask)
    case (.refuse, let reason?):
      guard let refusal = ReceiptRefusal(rawValue: reason) else { return nil }
      self = .refuse(refusal)
    case (.allow, _?), (.approved, _?), (.denied, _?), (.undone, _?), (.changed, _?), (.ask, nil), (.refuse, nil):
      return nil
    }
  }

  /// The decision word.
  public var rawValue: String {
    switch self {
    case .allow, .approved, .denied, .undone, .changed: return kind.rawValue
    case .ask(let reason): return "ask:" + reason.rawValue
    case .refuse(let reason): return "refuse:" + reason.rawValue
    }
  }

  /// The decision without its reason.
  public var kind: GateDecisionKind {
    switch self {
    case .allow: return .allow
    case .ask: return .ask
    case .refuse: return .refuse
    case .approved: return .approved
    case .denied: return .denied
    case .undone: return .undone
    case .changed: return .changed
    }
  }

  /// Every decision whose word has no free part (all but
  /// `refuse:missing-grant:<grant>`), made from the kinds and reasons'
  /// `allCases`: the schema's CHECK lists these words, so it cannot drift
  /// from the enums.
  public static var fixedCases: [ReceiptDecision] {
    GateDecisionKind.allCases.flatMap { kind -> [ReceiptDecision] in
      switch kind {
      case .allow: return [.allow]
      case .ask: return AskReason.allCases.map { .ask($0) }
      case .refuse: return ReceiptRefusal.fixedCases.map { .refuse($0) }
      case .approved: return [.approved]
      case .denied: return [.denied]
      case .undone: return [.undone]
      case .changed: return [.changed]
      }
    }
  }
}

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
