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
    case .trusted: return [.allow, .failed]
    case .assistant: return [.allow, .ask, .refuse, .approved, .read, .failed]
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

  /// Every tool a receipt may name, in declaration order: all of them
  /// since schema 8 (the reading tools in aggregated `read` receipts and
  /// their refusals).
  public static var receiptTools: [GateTool] { allCases }

  /// Whether the tool only reads: `list_tasks`, `search_tasks`,
  /// `show_task`, `read_note`. A receipt of one has decision `read`, or a
  /// refusal that fits reads (`ReceiptRefusal.fitsReads`); decision `read`
  /// has one of these tools (rule 5).
  public var isRead: Bool {
    switch self {
    case .listTasks, .searchTasks, .showTask, .readNote: return true
    case .addTask, .editTask, .completeTask, .deleteTask, .addPage, .deletePage, .undo: return false
    }
  }

  /// The reading tools, in declaration order.
  public static var readTools: [GateTool] { allCases.filter(\.isRead) }

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
  /// `queue-full`: the call was to be queued for approval, but the key's
  /// approval queue is at a cap (schema 8; earlier receipts of a full
  /// queue say `budget-exhausted`, with the cap in the summary).
  case queueFull
  /// `read-budget-exhausted`: the key's daily budget of reads is used up.
  case readBudgetExhausted
  /// `read-budget-undecidable`: whether the read budget has room could not
  /// be decided (a damaged setting).
  case readBudgetUndecidable
  /// `rate-limited`: the aggregate of the refusals of one key, tool and
  /// window past the key's limit of single refusal receipts; its target
  /// is `refusals/<N>`.
  case rateLimited

  /// The refusals without a free part, for the schema's list of words.
  public static let fixedCases: [ReceiptRefusal] = [
    .budgetExhausted, .budgetUndecidable, .queueFull, .readBudgetExhausted, .readBudgetUndecidable, .rateLimited,
  ]

  /// Whether a receipt of a reading tool may carry this refusal:
  /// the read budget's two and `rate-limited`.
  public var fitsReads: Bool {
    switch self {
    case .readBudgetExhausted, .readBudgetUndecidable, .rateLimited: return true
    case .missingGrant, .budgetExhausted, .budgetUndecidable, .queueFull: return false
    }
  }

  /// Whether a receipt of an acting tool may carry this refusal: all but
  /// the read budget's two.
  public var fitsActions: Bool {
    switch self {
    case .readBudgetExhausted, .readBudgetUndecidable: return false
    case .missingGrant, .budgetExhausted, .budgetUndecidable, .queueFull, .rateLimited: return true
    }
  }

  /// The longest grant word.
  public static let maximumGrantLength = 64

  /// Reads a refusal word; nil for anything else.
  ///
  /// - Parameter rawValue: `missing-grant:<grant>` or a word of `fixedCases`.
  public init?(rawValue: String) {
    switch rawValue {
    case "budget-exhausted": self = .budgetExhausted
    case "budget-undecidable": self = .budgetUndecidable
    case "queue-full": self = .queueFull
    case "read-budget-exhausted": self = .readBudgetExhausted
    case "read-budget-undecidable": self = .readBudgetUndecidable
    case "rate-limited": self = .rateLimited
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
    case .queueFull: return "queue-full"
    case .readBudgetExhausted: return "read-budget-exhausted"
    case .readBudgetUndecidable: return "read-budget-undecidable"
    case .rateLimited: return "rate-limited"
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
  /// Reading calls of one key and tool in one window, aggregated (schema
  /// 8): target `reads/<N>`, N the calls.
  case read
  /// An allowed call that ran and failed; nothing changed (schema 8).
  case failed

  /// Whether the call it records ran and changed something (and may carry
  /// an undo).
  public var ran: Bool {
    switch self {
    case .allow, .approved, .changed: return true
    case .ask, .refuse, .denied, .undone, .read, .failed: return false
    }
  }

  /// Whether a receipt of this kind belongs to an approval (rule 9).
  public var hasApproval: Bool {
    switch self {
    case .ask, .approved, .denied: return true
    case .allow, .refuse, .undone, .changed, .read, .failed: return false
    }
  }

  /// The kinds of a call that ran, as the schema lists them.
  public static var ranCases: [GateDecisionKind] { allCases.filter(\.ran) }
}

/// What a receipt records as decided, stored as its word (`allow`,
/// `ask:<reason>`, `refuse:<reason>`, `approved`, `denied`, `undone`,
/// `changed`, `read`, `failed`).
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
  /// Reading calls aggregated into one receipt.
  case read
  /// An allowed call that ran and failed; nothing changed.
  case failed

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
    case (.read, nil): self = .read
    case (.failed, nil): self = .failed
    case (.ask, let reason?):
      guard let ask = AskReason(rawValue: reason) else { return nil }
      self = .ask(ask)
    case (.refuse, let reason?):
      guard let refusal = ReceiptRefusal(rawValue: reason) else { return nil }
      self = .refuse(refusal)
    case (.allow, _?), (.approved, _?), (.denied, _?), (.undone, _?), (.changed, _?), (.read, _?), (.failed, _?),
      (.ask, nil), (.refuse, nil):
      return nil
    }
  }

  /// The decision word.
  public var rawValue: String {
    switch self {
    case .allow, .approved, .denied, .undone, .changed, .read, .failed: return kind.rawValue
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
    case .read: return .read
    case .failed: return .failed
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
      case .read: return [.read]
      case .failed: return [.failed]
      }
    }
  }
}
