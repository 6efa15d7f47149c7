import AssistantKeys
import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// Issue 22 break 15: the receipts table keeps every rule of receipt.md,
/// `INSERT OR REPLACE` cannot rewrite a receipt, and a row that breaks a
/// rule anyway (a writer who turned the checks off, or an older table) is
/// an error naming the receipt when it is read, never a receipt.
@Suite("gate_receipts: the rules of receipt.md in the table and on every read")
struct GateReceiptTableTests {
  let directory: TemporaryDirectory
  let store: TaskStore

  init() throws {
    directory = try TemporaryDirectory()
    store = try TaskStore(databasePath: directory.path("t.db"), keys: try Keyring.generate())
  }

  /// An INSERT of a receipt row with `columns` over a valid trusted addition.
  static func insert(_ changes: [String: String], id: Int64? = nil) -> String {
    var values = [
      "at": "1796000000", "actor": "'trusted'", "key_id": "NULL", "assistant": "NULL", "tool": "'add_task'",
      "decision": "'allow'", "target": "'task/1'", "summary": "'added'", "undo": "'delete-task:1'",
      "undoes": "NULL", "approval": "NULL",
    ]
    values.merge(changes) { $1 }
    let names = [
      "at", "actor", "key_id", "assistant", "tool", "decision", "target", "summary", "undo", "undoes", "approval",
    ]
    let idColumn = id.map { _ in "id, " } ?? ""
    let idValue = id.map { "\($0), " } ?? ""
    return "INSERT INTO gate_receipts (\(idColumn)\(names.joined(separator: ", "))) VALUES (\(idValue)"
      + names.map { values[$0]! }.joined(separator: ", ") + ")"
  }

  /// The rows the issue found accepted, and one for each other rule.
  static let broken: [(String, [String: String])] = [
    ("decision maybe", ["decision": "'maybe'"]),
    (
      "an undo on a refusal",
      [
        "actor": "'assistant'", "key_id": "'tkid_0123456789abcdef'", "assistant": "'a'",
        "decision": "'refuse:budget-exhausted'", "target": "''",
      ]
    ),
    ("an upper-case key id", ["actor": "'assistant'", "key_id": "'tkid_0123456789ABCDEF'", "assistant": "'a'"]),
    (
      "undoes pointing forward",
      [
        "actor": "'user'", "tool": "'undo'", "decision": "'undone'", "target": "'receipt/9'",
        "undo": "NULL", "undoes": "9",
      ]
    ),
    ("at -1", ["at": "-1"]),
    ("at as text", ["at": "'soon'"]),
    ("an unknown tool", ["tool": "'drop_table'"]),
    ("a target of another form", ["target": "'task/01'", "undo": "'delete-task:01'"]),
    ("a bulk target naming one task twice", ["tool": "'edit_task'", "target": "'tasks/3,3'", "undo": "NULL"]),
    ("a bulk target of one task", ["tool": "'edit_task'", "target": "'tasks/3'", "undo": "NULL"]),
    ("an undo of another task", ["undo": "'delete-task:2'"]),
    ("an addition without its undo", ["undo": "NULL"]),
    ("a trusted ask", ["decision": "'ask:risky'", "target": "'approval/1'", "undo": "NULL", "approval": "1"]),
    (
      "an assistant name of 65 characters",
      [
        "actor": "'assistant'", "key_id": "'tkid_0123456789abcdef'",
        "assistant": "'\(String(repeating: "a", count: 65))'",
      ]
    ),
    (
      "a grant with a capital",
      [
        "actor": "'assistant'", "key_id": "'tkid_0123456789abcdef'", "assistant": "'a'",
        "decision": "'refuse:missing-grant:Tasks'", "target": "''", "undo": "NULL",
      ]
    ),
  ]

  @Test func theTableRefusesEveryRowThatBreaksARule() throws {
    try store.connection.execute(Self.insert([:]))
    for (what, changes) in Self.broken {
      #expect(throws: TaskerError.self, "\(what)") { try store.connection.execute(Self.insert(changes)) }
    }
    #expect(try store.receipts().map(\.id) == [1])
  }

  @Test func insertOrReplaceCannotRewriteAReceipt() throws {
    try store.connection.execute(Self.insert([:]))
    try store.connection.execute(
      Self.insert([
        "actor": "'user'", "tool": "'undo'", "decision": "'undone'", "target": "'receipt/1'",
        "undo": "NULL", "undoes": "1",
      ]))
    let before = try store.receipts()
    #expect(throws: TaskerError.self) {
      try store.connection.execute(
        Self.insert(["summary": "'rewritten'"], id: 1).replacing("INSERT", with: "INSERT OR REPLACE"))
    }
    #expect(throws: TaskerError.self, "a second undo of r1 would replace the first") {
      try store.connection.execute(
        Self.insert([
          "actor": "'user'", "tool": "'undo'", "decision": "'undone'", "target": "'receipt/1'",
          "undo": "NULL", "undoes": "1",
        ]).replacing("INSERT", with: "REPLACE"))
    }
    #expect(throws: TaskerError.self) { try store.connection.execute("UPDATE OR REPLACE gate_receipts SET at = 0") }
    #expect(try store.receipts() == before)
  }

  @Test func aRowWrittenWithTheChecksOffIsAnErrorNamingItWhenRead() throws {
    try store.connection.execute(Self.insert([:]))
    try store.connection.execute("PRAGMA ignore_check_constraints = ON")
    try store.connection.execute(Self.insert(["decision": "'maybe'"]))
    try store.connection.execute("PRAGMA ignore_check_constraints = OFF")
    #expect(throws: TaskerError.receiptInvalid(id: 2, reason: "rule 5: unknown decision")) { try store.receipts() }
    #expect(throws: TaskerError.receiptInvalid(id: 2, reason: "rule 5: unknown decision")) { try store.receipt(id: 2) }
    #expect(try store.receipt(id: 1)?.decision == .allow)
  }

  @Test func aValueOfTheWrongTypeIsAnErrorNamingTheReceipt() throws {
    try store.connection.execute("PRAGMA ignore_check_constraints = ON")
    try store.connection.execute(Self.insert(["at": "'soon'"]))
    #expect(throws: TaskerError.receiptInvalid(id: 1, reason: "a column holds a value of the wrong type")) {
      try store.receipts()
    }
  }

  @Test func theMigrationChecksEveryExistingRowAndKeepsTheNumbering() throws {
    let path = directory.path("v3.db")
    do {
      #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
      let old = try Connection(path: path, create: false)
      for step in Schema.migrations[0..<3] { try old.execute(step) }
      try old.execute("PRAGMA user_version = 3")
      for (index, (_, changes)) in Self.broken.prefix(5).enumerated() where index != 3 {
        try old.execute(Self.insert(changes))
      }
      try old.execute(Self.insert([:]))
      try old.execute(Self.insert(["target": "'task/2'", "undo": "'delete-task:2'"]))
      // A v3 row refused now, with a valid undo of it that must go too.
      try old.execute(
        Self.insert([
          "actor": "'user'", "tool": "'undo'", "decision": "'undone'", "target": "'receipt/1'",
          "undo": "NULL", "undoes": "1",
        ]))
    }
    let migrated = try TaskStore(databasePath: path, keys: try Keyring.generate())
    let kept = try migrated.connection.prepare("SELECT id FROM gate_receipts ORDER BY id").rows { $0.integer(0) }
    #expect(kept == [5, 6])
    let refused = try migrated.connection.prepare("SELECT id FROM gate_receipts_refused ORDER BY id").rows {
      $0.integer(0)
    }
    #expect(refused == [1, 2, 3, 4, 7])
    #expect(
      throws: TaskerError.receiptInvalid(id: 1, reason: "it broke a rule of receipt.md when the table was rebuilt")
    ) {
      try migrated.receipts()
    }
    #expect(throws: TaskerError.self) { try migrated.connection.execute("DELETE FROM gate_receipts_refused") }
    let next = try migrated.appendReceipt(Self.added(3))
    #expect(next.id == 8, "no receipt number is used twice")
  }

  static func added(_ task: Int64) -> GateReceipt {
    GateLedgerTests.added(task)
  }

  static let key = AssistantKeyID("tkid_0123456789abcdef")!

  @Test func everyReceiptTheGateWritesIsAcceptedByTheTableAndTheReader() throws {
    let approval = try store.enqueueApproval(
      keyID: Self.key, assistant: "a", tool: .editTask, arguments: "{}", reason: .risky, summary: "")
    let written = [
      Self.added(1),
      GateReceipt(
        actor: .assistant, keyID: Self.key, assistant: "a", tool: .editTask, decision: .ask(.risky),
        target: "approval/\(approval.id)", summary: "queued", approval: approval.id),
      GateReceipt(
        actor: .assistant, keyID: Self.key, assistant: "a", tool: .editTask, decision: .approved,
        target: "tasks/1,2,3", summary: "edited", approval: approval.id),
      GateReceipt(
        actor: .user, keyID: nil, assistant: nil, tool: .deleteTask, decision: .denied,
        target: "approval/\(approval.id)", summary: "denied", approval: approval.id),
      GateReceipt(
        actor: .assistant, keyID: Self.key, assistant: "a", tool: .addPage,
        decision: .refuse(.missingGrant("pages:write")), target: "", summary: "refused"),
      GateReceipt(
        actor: .trusted, keyID: nil, assistant: nil, tool: .completeTask, decision: .allow, target: "task/1",
        summary: "completed, already done"),
      GateReceipt(
        actor: .user, keyID: nil, assistant: nil, tool: .undo, decision: .undone, target: "receipt/1",
        summary: "undid", undoes: 1),
      // The user's own undoable changes.
      GateReceipt(
        actor: .user, keyID: nil, assistant: nil, tool: .deleteTask, decision: .changed, target: "task/1",
        summary: "deleted", undo: ReceiptUndo(.restoreTask, 1)),
      GateReceipt(
        actor: .user, keyID: nil, assistant: nil, tool: .editTask, decision: .changed, target: "task/2",
        summary: "edited", undo: ReceiptUndo(.revertEdit, 2)),
      GateReceipt(
        actor: .user, keyID: nil, assistant: nil, tool: .deletePage, decision: .changed, target: "page/1",
        summary: "deleted", undo: ReceiptUndo(.restorePage, 1)),
    ]
    for receipt in written { try store.appendReceipt(receipt) }
    #expect(try store.receipts().count == written.count)
  }

  /// The rows version 5 allows (the user's own changes) against those it
  /// still refuses, in the table and in the reader alike.
  static let userChanges: [(String, [String: String], Bool)] = [
    (
      "a user delete",
      ["actor": "'user'", "tool": "'delete_task'", "decision": "'changed'", "undo": "'restore-task:1'"], true
    ),
    (
      "a user page delete",
      [
        "actor": "'user'", "tool": "'delete_page'", "decision": "'changed'", "target": "'page/1'",
        "undo": "'restore-page:1'",
      ], true
    ),
    (
      "a user edit", ["actor": "'user'", "tool": "'edit_task'", "decision": "'changed'", "undo": "'revert-edit:1'"],
      true
    ),
    ("a user edit purged", ["actor": "'user'", "tool": "'edit_task'", "decision": "'changed'", "undo": "NULL"], true),
    ("a user addition", ["actor": "'user'", "decision": "'changed'"], false),
    ("a trusted change", ["tool": "'delete_task'", "decision": "'changed'", "undo": "'restore-task:1'"], false),
    ("a page delete that is not the user's", ["tool": "'delete_page'", "target": "'page/1'", "undo": "NULL"], false),
    (
      "a restore of another task",
      [
        "actor": "'user'", "tool": "'delete_task'", "decision": "'changed'", "undo": "'restore-task:2'",
      ], false
    ),
    (
      "a revert of a bulk edit",
      [
        "actor": "'user'", "tool": "'edit_task'", "decision": "'changed'", "target": "'tasks/1,2'",
        "undo": "'revert-edit:1'",
      ], false
    ),
    ("a restore on an addition", ["undo": "'restore-task:1'"], false),
    ("the user allowing", ["actor": "'user'", "tool": "'delete_task'", "undo": "NULL"], false),
    (
      "changed with a reason",
      [
        "actor": "'user'", "tool": "'delete_task'", "decision": "'changed:x'", "undo": "NULL",
      ], false
    ),
  ]

  @Test func theUsersOwnChangesAreAcceptedAndNothingElseIs() throws {
    for (index, (what, changes, accepted)) in Self.userChanges.enumerated() {
      let fresh = try TaskStore(databasePath: directory.path("u\(index).db"), keys: try Keyring.generate())
      let inserted: Bool
      do {
        try fresh.connection.execute(Self.insert(changes))
        inserted = true
      } catch {
        inserted = false
      }
      #expect(inserted == accepted, "the table: \(what)")
      // The reader decides the same on the same values, written with the checks off.
      try fresh.connection.execute("PRAGMA ignore_check_constraints = ON")
      if !inserted { try fresh.connection.execute(Self.insert(changes)) }
      #expect(((try? fresh.receipts()) != nil) == accepted, "the reader: \(what)")
    }
  }

  /// The table and the reader agree with every vector: each object of
  /// Vectors/receipt-v1.json whose shape, version and `receipt` member are
  /// right (what only the JSON form has) is stored as a row, and the table
  /// accepts it exactly when the vector's outcome is success.
  @Test func theTableAgreesWithEveryVector() throws {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Vectors/receipt-v1.json")
    let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    var compared = 0
    for test in try #require(file["tests"] as? [[String: Any]]) {
      guard let object = test["receipt"] as? [String: Any], let row = Self.row(object) else { continue }
      let expected = test["result"] as? String == "success"
      let fresh = try TaskStore(databasePath: directory.path("v\(compared).db"), keys: try Keyring.generate())
      for _ in 1...3 {
        _ = try fresh.enqueueApproval(
          keyID: GateReceiptTableTests.key, assistant: "a", tool: .addTask, arguments: "{}",
          reason: .risky, summary: "")
      }
      for task in 1...6 { try fresh.appendReceipt(Self.added(Int64(task))) }
      let accepted: Bool
      do {
        try fresh.connection.prepare(
          "INSERT INTO gate_receipts (\(TaskStore.receiptColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ).run(row)
        accepted = true
      } catch {
        accepted = false
      }
      #expect(accepted == expected, "case \(test["id"] ?? 0): \(test["comment"] ?? "")")
      compared += 1
    }
    #expect(compared > 50)
  }

  /// A vector's object as a row, or nil when it breaks a rule only the
  /// JSON form has (members and types, version, `receipt`, `undoes` text).
  static func row(_ object: [String: Any]) -> [SQLValue]? {
    func integer(_ name: String) -> Int64?? {
      if object[name] is NSNull { return .some(nil) }
      guard let number = object[name] as? NSNumber, let value = Int64(number.stringValue) else { return nil }
      return .some(value)
    }
    func text(_ name: String) -> String?? {
      if object[name] is NSNull { return .some(nil) }
      return (object[name] as? String).map { .some($0) }
    }
    guard object.count == 14, integer("version") == .some(1), let id = integer("id") ?? nil,
      text("receipt") == .some("r\(id)"), let at = integer("at") ?? nil, let actor = text("actor") ?? nil,
      let keyID = text("key_id"), let assistant = text("assistant"), let tool = text("tool") ?? nil,
      let decision = text("decision") ?? nil, let target = text("target") ?? nil,
      let summary = text("summary") ?? nil, let undo = text("undo"), let undoesText = text("undoes"),
      let approval = integer("approval")
    else { return nil }
    let undoes = undoesText.flatMap { text in Int64(text.dropFirst()).flatMap { "r\($0)" == text ? $0 : nil } }
    guard undoesText == nil || undoes != nil else { return nil }
    func optional(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
    return [
      .integer(id), .integer(at), .text(actor), optional(keyID), optional(assistant), .text(tool), .text(decision),
      .text(target), .text(summary), optional(undo), undoes.map { .integer($0) } ?? .null,
      approval.map { .integer($0) } ?? .null,
    ]
  }
}
