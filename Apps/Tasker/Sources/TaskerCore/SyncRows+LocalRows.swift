import CommandKit
import TaskCrypto

/// The local rows a sync transaction writes: a record's shown values in
/// its task or page row.
extension SyncRows {
  // MARK: - Local rows

  /// Writes a record's shown values to its row (a new row when `localID`
  /// is nil or gone), the body stored as the protection settings say
  /// under the row's own context; the change is not marked as dirty.
  ///
  /// A new row is one INSERT with its body: its id is chosen first, as
  /// AUTOINCREMENT would choose it (above every id the table has had),
  /// because the body's context names the row.
  ///
  /// - Returns: the row's id.
  /// - Throws: the key source's errors, `TaskerError.database`.
  public func writeRow(kind: String, localID: Int64?, fields: [String: JSONValue], body: String?) throws -> Int64 {
    let sql = Self.rowStatements(kind)
    let values = sql.columns.map { name -> SQLValue in
      switch fields[name] {
      case .string(let text): return .text(text)
      case .integer(let number): return .integer(number)
      default: return Self.defaultValue(of: name)
      }
    }
    func stored(_ body: String, id: Int64) throws -> SQLValue {
      let context = Self.localContext(kind, id)
      return .text(try bodyEncryption() ? try store.sealer.seal(body, context: context, using: currentKeyring()) : body)
    }
    let rowID: Int64
    if let existing = localID, try connection.prepare(sql.exists).first([.integer(existing)], { _ in true }) != nil {
      rowID = existing
      if let body {
        try connection.prepare(sql.updateWithBody).run(values + [try stored(body, id: rowID), .integer(rowID)])
      } else {
        try connection.prepare(sql.update).run(values + [.integer(rowID)])
      }
    } else {
      rowID = try nextRowID(sql.table)
      try connection.prepare(sql.insert).run([.integer(rowID)] + values + [try stored(body ?? "", id: rowID)])
      memo.nextRowIDs[sql.table] = rowID + 1
    }
    // With the triggers off nothing marked the row.
    if !triggersOff { try clearDirty(kind: kind, localID: rowID) }
    return rowID
  }

  /// The statements `writeRow` runs on a kind's table, made once.
  struct RowStatements {
    let table: String
    let columns: [String]
    let exists: String
    let update: String
    let updateWithBody: String
    let insert: String
    /// The columns, then the body, of row `?` (`localRow`).
    let select: String

    init(table: String, columns: [String], body: String) {
      self.table = table
      self.columns = columns
      exists = "SELECT 1 FROM \(table) WHERE id = ?"
      select = "SELECT \((columns + [body]).joined(separator: ", ")) FROM \(table) WHERE id = ?"
      let assignments = columns.map { "\($0) = ?" }
      update = "UPDATE \(table) SET \(assignments.joined(separator: ", ")) WHERE id = ?"
      updateWithBody = "UPDATE \(table) SET \((assignments + ["\(body) = ?"]).joined(separator: ", ")) WHERE id = ?"
      let names = ["id"] + columns + [body]
      insert =
        "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))"
    }
  }

  static let taskStatements = RowStatements(table: "tasks", columns: taskColumns, body: "notes")
  static let pageStatements = RowStatements(table: "pages", columns: pageColumns, body: "body")

  static func rowStatements(_ kind: String) -> RowStatements { kind == "task" ? taskStatements : pageStatements }

  /// The value a column takes when the record lacks its field.
  static func defaultValue(of column: String) -> SQLValue {
    switch column {
    case "title", "contexts": return .text("")
    case "priority": return .integer(0)
    case "status": return .text("open")
    case "created_at", "updated_at": return .integer(TaskStore.now())
    default: return .null
    }
  }

  /// The id AUTOINCREMENT would give the next row of `table`: above the
  /// largest id it has now and above every id it ever had
  /// (`sqlite_sequence`), so a sealed body's context never names a
  /// deleted row again. Read once per transaction; `writeRow` counts on
  /// from there (a row added to the table another way in the same
  /// transaction makes the next insert fail on its primary key, never
  /// share an id).
  private func nextRowID(_ table: String) throws -> Int64 {
    if let known = memo.nextRowIDs[table] { return known }
    return try connection.prepare(
      """
      SELECT max(coalesce((SELECT max(id) FROM \(table)), 0),
                 coalesce((SELECT seq FROM sqlite_sequence WHERE name = ?), 0)) + 1
      """
    ).first([.text(table)]) { $0.integer(0) } ?? 1
  }

  /// Deletes a record's row and its attachment rows.
  ///
  /// - Returns: the attachment files to remove once the transaction commits.
  /// - Throws: `TaskerError.attachmentRefused`, `.database`.
  public func deleteRow(kind: String, localID: Int64) throws -> [String] {
    guard try connection.prepare(Self.rowStatements(kind).exists).first([.integer(localID)], { _ in true }) != nil
    else { return [] }
    let files: [String]
    try forgetAttachments(ofDeleted: kind == "task" ? .task(localID) : .page(localID))
    if kind == "task" {
      files = try store.removeTaskRows(localID)
    } else {
      files = try store.attachmentFiles(of: .page(localID)).map(\.file)
      try connection.prepare("DELETE FROM attachments WHERE page_id = ?").run([.integer(localID)])
      try connection.prepare("DELETE FROM pages WHERE id = ?").run([.integer(localID)])
    }
    try clearDirty(kind: kind, localID: localID)
    return files
  }
}
