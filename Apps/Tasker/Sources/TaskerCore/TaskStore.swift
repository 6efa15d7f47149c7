import FoundationEssentials
import TaskCrypto
import TaskSystem

/// Which tasks a listing shows.
public enum TaskFilter: String, Sendable, CaseIterable {
  /// Tasks still to do.
  case open
  /// Completed tasks.
  case done
  /// Every task.
  case all
}

/// Tasker's store: tasks, pages and attachments in one SQLite database.
///
/// Titles, dates, status, priority, energy and contexts are stored plain.
/// Note text and page bodies are sealed with TaskKey's `SealedValue` under
/// the vault's primary note key before they are written (when encryption
/// is on, the default for a new database), bound to their record and field
/// (`task/<id>/notes`, `page/<id>/body`), and opened when read. A plain
/// body (written with encryption off, or before it was turned on) opens
/// unchanged. Every logical change is one transaction; a change that needs
/// a key reads the key first, so a locked vault writes nothing.
public final class TaskStore {
  /// The database file.
  public let databasePath: String
  let connection: Connection
  let sealer: BodySealer
  let files: TaskerFiles
  /// Where the protection settings are kept (the vault), or nil when the
  /// key source keeps none; then `keptProtection` holds them.
  let protectionRecords: (any ProtectionRecords)?
  /// Where the receipt head's key is kept, or nil (no head is written).
  let receiptHeadKeys: (any ReceiptHeadKeys)?
  /// The protection settings of a store whose key source keeps none (a
  /// keyring the app holds itself): for this store's life, never read
  /// from the database.
  var keptProtection = ProtectionSettings.defaults

  /// Opens the database at `databasePath`, creating it (and bringing its
  /// schema up to date) when asked.
  ///
  /// - Parameters:
  ///   - databasePath: the SQLite file.
  ///   - keys: where note keys come from; asked only when a body is sealed
  ///     or a sealed body is opened.
  ///   - create: make the database when it does not exist.
  /// - Throws: `TaskerError.system` when the directory, the database, its
  ///   `-wal`/`-shm` or the attachments folder is not private to the user
  ///   (`TaskerHome.checkPrivate`), `.databaseNotFound`, `.notADatabase`,
  ///   `.databaseTooNew`, `.damagedDatabase`, `.database`.
  public convenience init(databasePath: String, keys: NoteKeySource, create: Bool = true) throws {
    try self.init(databasePath: databasePath, keys: keys, create: create, fileSystem: PosixFileSystem())
  }

  /// The test seam: a store whose file writes go through `fileSystem`.
  /// A `readOnly` store reads an existing database without a transaction or
  /// a write lock; one older than this build is opened read-write instead,
  /// once, to migrate it.
  init(
    databasePath: String, keys: NoteKeySource, create: Bool, fileSystem: FileSystem, readOnly: Bool = false
  ) throws {
    // Before SQLite opens anything, for reading and writing alike.
    try TaskerHome.checkPrivate(databasePath: databasePath)
    self.databasePath = databasePath
    files = TaskerFiles(fileSystem: fileSystem)
    sealer = BodySealer(source: keys)
    protectionRecords = keys.protectionRecords
    receiptHeadKeys = keys.receiptHeadKeys
    if readOnly {
      let reader = try Connection(path: databasePath, create: false, readOnly: true)
      if try Schema.isCurrent(reader) {
        connection = reader
        return
      }
    }
    // Made 0600 before SQLite opens it; SQLite gives its -wal and -shm files the same mode.
    if create { try files.createEmptyIfMissing(databasePath) }
    connection = try Connection(path: databasePath, create: false)
    try Schema.migrate(connection)
  }

  /// Opens the existing database in `home` for reading only (`show`,
  /// `list`, `page show`, `plan-context`): no write lock, no migration
  /// work when the schema is current, and nothing rewritten when it closes.
  /// A change through this store fails with `TaskerError.database`
  /// (`SQLITE_READONLY`).
  ///
  /// - Throws: `TaskerError.system` when a file is not private (as
  ///   `init(databasePath:keys:create:)`), `.databaseNotFound`,
  ///   `.notADatabase`, `.databaseTooNew`, `.damagedDatabase`, `.database`.
  public static func reading(home: TaskerHome, keys: NoteKeySource) throws -> TaskStore {
    try TaskStore(
      databasePath: home.databasePath, keys: keys, create: false, fileSystem: PosixFileSystem(), readOnly: true)
  }

  /// Opens the database in `home`, making the directory when `create` is true.
  ///
  /// - Throws: as `init(databasePath:keys:create:)`, and `.system` when the
  ///   directory cannot be made or is not private.
  public convenience init(home: TaskerHome, keys: NoteKeySource, create: Bool = true) throws {
    if create { try home.prepare(TaskerFiles(fileSystem: PosixFileSystem())) }
    try self.init(databasePath: home.databasePath, keys: keys, create: create)
  }

  static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

  // MARK: - Settings

  func setting(_ name: String) throws -> String? {
    try connection.prepare("SELECT value FROM settings WHERE name = ?").first([.text(name)]) { $0.text(0) }
  }

  func setSetting(_ name: String, _ value: String) throws {
    try connection.transaction {
      try connection.prepare(
        "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value"
      )
      .run([.text(name), .text(value)])
    }
  }

  /// The body to store for `text` in `context`: sealed when encryption is
  /// on, plain otherwise.
  func storedBody(_ text: String, context: String) throws -> String {
    try bodyEncryption() ? try sealer.seal(text, context: context) : text
  }

  /// Reads the keys now when a body will be sealed, so that a locked vault
  /// fails before any row is written.
  func prepareToSeal(_ text: String?) throws {
    guard let text, !text.isEmpty, try bodyEncryption() else { return }
    _ = try sealer.keyring()
  }

  // MARK: - Tasks

  static let summaryColumns = "id, title, due, estimate_minutes, priority, energy, status, contexts, plan_order"

  /// Adds a task; its notes are sealed under `task/<id>/notes`.
  ///
  /// - Returns: the new task, notes opened.
  /// - Throws: `TaskerError.invalidValue` (empty title, negative estimate),
  ///   the key source's errors (nothing written), `.database`.
  @discardableResult
  public func addTask(_ draft: TaskDraft) throws -> TaskRecord {
    try task(id: try addTasks([draft])[0])
  }

  /// Adds many tasks in one transaction (an import): all or none.
  ///
  /// - Returns: the new ids, in order.
  /// - Throws: as `addTask(_:)`; on any error no task was added.
  @discardableResult
  public func addTasks(_ drafts: [TaskDraft]) throws -> [Int64] {
    for draft in drafts {
      try Self.check(title: draft.title)
      try Self.check(estimate: draft.estimateMinutes)
    }
    let sealing = try drafts.contains(where: { !$0.notes.isEmpty }) && bodyEncryption()
    if sealing { _ = try sealer.keyring() }
    let created = Self.now()
    return try connection.transaction { () -> [Int64] in
      // Confirmed inside the write lock, which rewrap takes too: never a key rewrap has moved away from.
      let keyring = sealing ? try sealer.currentKeyring() : nil
      let insert = try connection.prepare(
        """
        INSERT INTO tasks (title, due, estimate_minutes, priority, energy, created_at, contexts)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """)
      let setNotes = try connection.prepare("UPDATE tasks SET notes = ? WHERE id = ?")
      var ids = [Int64]()
      ids.reserveCapacity(drafts.count)
      for draft in drafts {
        try insert.run([
          .text(draft.title), draft.due.map { .text($0.description) } ?? .null,
          draft.estimateMinutes.map { .integer(Int64($0)) } ?? .null, .integer(Int64(draft.priority.rawValue)),
          draft.energy.map { .integer(Int64($0.rawValue)) } ?? .null, .integer(created), .text(draft.contexts),
        ])
        let id = connection.lastInsertedRowID
        if !draft.notes.isEmpty {
          let context = BodyContext.notes(ofTask: id)
          let notes = try keyring.map { try sealer.seal(draft.notes, context: context, using: $0) } ?? draft.notes
          try setNotes.run([.text(notes), .integer(id)])
        }
        ids.append(id)
      }
      return ids
    }
  }

  /// Tasks without their notes, by status; open tasks by due day (undated
  /// last), then id; the first `limit` of them (nil: all). Needs no key.
  ///
  /// - Throws: `TaskerError.database`.
  public func tasks(_ filter: TaskFilter = .open, limit: Int? = nil) throws -> [TaskSummary] {
    let condition: String
    switch filter {
    case .open: condition = "WHERE status = 'open'"
    case .done: condition = "WHERE status = 'done'"
    case .all: condition = ""
    }
    return try connection.prepare(
      "SELECT \(Self.summaryColumns) FROM tasks \(condition) ORDER BY due IS NULL, due, id LIMIT ?"
    ).rows([.integer(limit.map { Int64(max(0, $0)) } ?? -1)], Self.summary)
  }

  /// Tasks whose title or contexts contain `text` (case-insensitive for
  /// ASCII). Notes are sealed, so they are not searched. Needs no key.
  ///
  /// - Throws: `TaskerError.database`.
  public func searchTasks(_ text: String, limit: Int = 100) throws -> [TaskSummary] {
    try searchTasks(text, matchingContexts: true, limit: limit)
  }

  /// Tasks whose title, and with `matchingContexts` also whose contexts,
  /// contain `text` (case-insensitive for ASCII), ordered by status, due
  /// date and id only. With `matchingContexts` false the contexts take no
  /// part in which tasks match, how many, or their order, so a caller who
  /// may not read contexts learns nothing of them by searching (the gate,
  /// for a key without `notes:read`). Notes are sealed and never searched.
  ///
  /// - Throws: `TaskerError.database`.
  public func searchTasks(_ text: String, matchingContexts: Bool, limit: Int) throws -> [TaskSummary] {
    let pattern = "%" + Self.escapeLike(text) + "%"
    let condition =
      matchingContexts
      ? "title LIKE ?1 ESCAPE '\\' OR contexts LIKE ?1 ESCAPE '\\'" : "title LIKE ?1 ESCAPE '\\'"
    return try connection.prepare(
      """
      SELECT \(Self.summaryColumns) FROM tasks
      WHERE \(condition)
      ORDER BY status = 'done', due IS NULL, due, id LIMIT ?2
      """
    ).rows([.text(pattern), .integer(Int64(max(0, limit)))], Self.summary)
  }

  /// One task with its notes opened; with `openingNotes` false, its plain
  /// fields only (`notes` empty, no key asked for: `show` on a locked vault).
  ///
  /// - Throws: `TaskerError.notFound`, the key source's errors when the
  ///   notes are sealed, `.sealedBodyUnreadable`, `.database`.
  public func task(id: Int64, openingNotes: Bool = true) throws -> TaskRecord {
    let row = try connection.prepare(
      """
      SELECT id, title, notes, due, estimate_minutes, priority, energy, status, created_at, completed_at, contexts
      FROM tasks WHERE id = ?
      """
    ).first([.integer(id)]) { row in
      (
        stored: row.text(2),
        record: TaskRecord(
          id: row.integer(0), title: row.text(1), notes: "", due: Self.date(row.optionalText(3)),
          estimateMinutes: row.optionalInteger(4).map { Int($0) },
          priority: Priority(rawValue: Int(row.integer(5))) ?? .none,
          energy: row.optionalInteger(6).flatMap { Energy(rawValue: Int($0)) },
          status: TaskStatus(rawValue: row.text(7)) ?? .open,
          created: row.integer(8), completed: row.optionalInteger(9), contexts: row.text(10))
      )
    }
    guard let (stored, found) = row else { throw TaskerError.notFound(kind: .task, id: id) }
    var record = found
    guard openingNotes else { return record }
    record.notes = try sealer.open(stored, context: BodyContext.notes(ofTask: id))
    return record
  }

  /// A task's note text, opened.
  ///
  /// - Throws: as `task(id:)`.
  public func notes(ofTask id: Int64) throws -> String {
    try task(id: id).notes
  }

  /// Changes a task's fields; new notes are sealed under `task/<id>/notes`.
  /// Nothing is kept to undo it: `editTask(id:_:keepingCopyAs:)` keeps
  /// the earlier values and leaves a receipt.
  ///
  /// - Returns: the task after the change.
  /// - Throws: `TaskerError.notFound`, `.invalidValue`, the key source's
  ///   errors (nothing written), `.database`.
  @discardableResult
  public func editTask(id: Int64, _ changes: TaskChanges) throws -> TaskRecord {
    try check(changes)
    try connection.transaction { try applyEdit(id: id, changes) }
    return try task(id: id)
  }

  /// Checks an edit's values, and reads the keys now when it seals notes
  /// (so a locked vault fails before anything is written).
  func check(_ changes: TaskChanges) throws {
    if let title = changes.title { try Self.check(title: title) }
    if let estimate = changes.estimateMinutes { try Self.check(estimate: estimate) }
    try prepareToSeal(changes.notes)
  }

  /// Writes an edit, checked by `check(_:)`, in the caller's transaction
  /// (or its own).
  func applyEdit(id: Int64, _ changes: TaskChanges) throws {
    try connection.transaction {
      try requireTask(id)
      var assignments = [String]()
      var values = [SQLValue]()
      func set(_ column: String, _ value: SQLValue) {
        assignments.append("\(column) = ?")
        values.append(value)
      }
      if let title = changes.title { set("title", .text(title)) }
      if let notes = changes.notes {
        set("notes", .text(try storedBody(notes, context: BodyContext.notes(ofTask: id))))
      }
      if let due = changes.due { set("due", due.map { .text($0.description) } ?? .null) }
      if let estimate = changes.estimateMinutes {
        set("estimate_minutes", estimate.map { .integer(Int64($0)) } ?? .null)
      }
      if let priority = changes.priority { set("priority", .integer(Int64(priority.rawValue))) }
      if let energy = changes.energy { set("energy", energy.map { .integer(Int64($0.rawValue)) } ?? .null) }
      if let contexts = changes.contexts { set("contexts", .text(contexts)) }
      guard !assignments.isEmpty else { return }
      // Only the fixed column names above are joined into the SQL; every value is bound.
      try connection.prepare("UPDATE tasks SET \(assignments.joined(separator: ", ")) WHERE id = ?")
        .run(values + [.integer(id)])
    }
    // No earlier version of the notes stays in the log (logKeptByReader says when one does); inside a
    // transaction this runs after its commit.
    if changes.notes != nil { try connection.truncateLog() }
  }

  /// Marks a task done (a done task stays done, keeping its time).
  ///
  /// - Throws: `TaskerError.notFound`, `.database`.
  public func completeTask(id: Int64) throws {
    try connection.transaction {
      try requireTask(id)
      try connection.prepare("UPDATE tasks SET status = 'done', completed_at = ? WHERE id = ? AND status = 'open'")
        .run([.integer(Self.now()), .integer(id)])
    }
  }

  /// Marks a task open again.
  ///
  /// - Throws: `TaskerError.notFound`, `.database`.
  public func reopenTask(id: Int64) throws {
    try connection.transaction {
      try requireTask(id)
      try connection.prepare("UPDATE tasks SET status = 'open', completed_at = NULL WHERE id = ?").run([.integer(id)])
    }
  }

  /// Deletes a task for good, with its notes and its attachments (rows,
  /// then files), and the kept earlier values of its undoable edits;
  /// `deleteTask(id:keepingCopyAs:)` keeps a copy for `undo(receipt:)`.
  ///
  /// - Throws: `TaskerError.notFound`, `.attachmentRefused`, `.database`.
  public func deleteTask(id: Int64) throws {
    let files = try connection.transaction { try removeTaskRows(id) }
    // After the commit: a crash in between leaves unreferenced files, never a row without its file.
    for file in files { self.files.remove(attachmentsDirectory + "/" + file) }
  }

  /// Deletes task `id`'s row, its attachment rows and the kept values of
  /// its edits, in the caller's transaction (or its own).
  ///
  /// - Returns: the attachment files to remove once that commits.
  func removeTaskRows(_ id: Int64) throws -> [String] {
    try connection.transaction { () -> [String] in
      try requireTask(id)
      let files = try attachmentFiles(ofTask: id)
      try connection.prepare("DELETE FROM tasks WHERE id = ?").run([.integer(id)])
      // The edits' kept values can never be put back now.
      try connection.prepare("DELETE FROM gate_undo_tasks WHERE id = ? AND fields <> ?")
        .run([.integer(id), .text(Self.wholeRow)])
      return files
    }
  }

  func requireTask(_ id: Int64) throws {
    guard try connection.prepare("SELECT 1 FROM tasks WHERE id = ?").first([.integer(id)], { _ in true }) != nil else {
      throw TaskerError.notFound(kind: .task, id: id)
    }
  }

  static func summary(_ row: Statement) -> TaskSummary {
    TaskSummary(
      id: row.integer(0), title: row.text(1), due: date(row.optionalText(2)),
      estimateMinutes: row.optionalInteger(3).map { Int($0) },
      priority: Priority(rawValue: Int(row.integer(4))) ?? .none,
      energy: row.optionalInteger(5).flatMap { Energy(rawValue: Int($0)) },
      status: TaskStatus(rawValue: row.text(6)) ?? .open,
      contexts: row.text(7), planOrder: row.optionalInteger(8).map { Int($0) })
  }

  static func date(_ text: String?) -> CalendarDate? {
    text.flatMap { try? CalendarDate(parsing: $0) }
  }

  static func check(title: String) throws {
    guard !title.allSatisfy(\.isWhitespace) else {
      throw TaskerError.invalidValue(field: "title", reason: "a title must not be empty")
    }
  }

  static func check(estimate: Int?) throws {
    guard let estimate, estimate < 0 else { return }
    throw TaskerError.invalidValue(field: "estimate", reason: "minutes must not be negative")
  }

  static func escapeLike(_ text: String) -> String {
    var escaped = ""
    for character in text {
      if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
      escaped.append(character)
    }
    return escaped
  }
}
