/// Pages: a title stored plain and a body sealed under `page/<id>/body`.
extension TaskStore {
  /// Adds a page; its body is sealed under `page/<id>/body`.
  ///
  /// - Returns: the new page, body opened.
  /// - Throws: `TaskerError.invalidValue` (empty title), the key source's
  ///   errors (nothing written), `.database`.
  @discardableResult
  public func addPage(title: String, body: String) throws -> Page {
    try Self.check(title: title)
    try prepareToSeal(body)
    let now = Self.now()
    let id = try connection.transaction { () -> Int64 in
      try connection.prepare("INSERT INTO pages (title, created_at, updated_at) VALUES (?, ?, ?)")
        .run([.text(title), .integer(now), .integer(now)])
      let id = connection.lastInsertedRowID
      let stored = try storedBody(body, context: BodyContext.body(ofPage: id))
      try connection.prepare("UPDATE pages SET body = ? WHERE id = ?").run([.text(stored), .integer(id)])
      return id
    }
    return try page(id: id)
  }

  /// Every page without its body, most recently changed first. Needs no key.
  ///
  /// - Throws: `TaskerError.database`.
  public func pages() throws -> [PageSummary] {
    try connection.prepare("SELECT id, title, updated_at FROM pages ORDER BY updated_at DESC, id DESC").rows {
      PageSummary(id: $0.integer(0), title: $0.text(1), updated: $0.integer(2))
    }
  }

  /// One page with its body opened.
  ///
  /// - Throws: `TaskerError.notFound`, the key source's errors when the body
  ///   is sealed, `.sealedBodyUnreadable`, `.database`.
  public func page(id: Int64) throws -> Page {
    let row = try connection.prepare("SELECT id, title, body, created_at, updated_at FROM pages WHERE id = ?")
      .first([.integer(id)]) {
        (
          stored: $0.text(2),
          page: Page(id: $0.integer(0), title: $0.text(1), body: "", created: $0.integer(3), updated: $0.integer(4))
        )
      }
    guard let (stored, found) = row else { throw TaskerError.notFound(kind: .page, id: id) }
    var page = found
    page.body = try sealer.open(stored, context: BodyContext.body(ofPage: id))
    return page
  }

  /// Changes a page's title, body or both; a new body is sealed under
  /// `page/<id>/body`.
  ///
  /// - Returns: the page after the change.
  /// - Throws: `TaskerError.notFound`, `.invalidValue`, the key source's
  ///   errors (nothing written), `.database`.
  @discardableResult
  public func editPage(id: Int64, title: String? = nil, body: String? = nil) throws -> Page {
    if let title { try Self.check(title: title) }
    try prepareToSeal(body)
    try connection.transaction {
      guard try connection.prepare("SELECT 1 FROM pages WHERE id = ?").first([.integer(id)], { _ in true }) != nil
      else {
        throw TaskerError.notFound(kind: .page, id: id)
      }
      let now = Self.now()
      if let title {
        try connection.prepare("UPDATE pages SET title = ?, updated_at = ? WHERE id = ?")
          .run([.text(title), .integer(now), .integer(id)])
      }
      if let body {
        let stored = try storedBody(body, context: BodyContext.body(ofPage: id))
        try connection.prepare("UPDATE pages SET body = ?, updated_at = ? WHERE id = ?")
          .run([.text(stored), .integer(now), .integer(id)])
      }
    }
    // No earlier version of the body stays in the log (logKeptByReader says when one does).
    if body != nil { try connection.truncateLog() }
    return try page(id: id)
  }

  /// Deletes a page with its body and its attachments, in one
  /// transaction: the page row (its sealed or plain body with it) and
  /// every attachment row of the page go together or not at all. The
  /// attachment files are removed after the commit, named by the code from
  /// each row's id (see `AttachmentFile`), never by the `file` column: a
  /// crash in between leaves unreferenced files (`diagnose` reports them),
  /// never a row without its file. Deleted rows are overwritten with zeros
  /// (`secure_delete`), and the log is then checkpointed and truncated, so
  /// no earlier copy of the body stays in `-wal` (`logKeptByReader` says
  /// when a reader kept it).
  ///
  /// (`GateLedger.swift`'s `deletePage(id:)`, the gate's undo of an added
  /// page, deletes the row only and leaves attachment files behind.)
  ///
  /// - Returns: the ids of the attachments deleted with it.
  /// - Throws: `TaskerError.notFound`; `.attachmentRefused` when an
  ///   attachment row's `file` column is not a name Tasker makes (then
  ///   nothing is deleted); `.database`.
  @discardableResult
  public func deletePageWithAttachments(id: Int64) throws -> [Int64] {
    let removed = try connection.transaction { () -> [(id: Int64, file: String)] in
      guard try connection.prepare("SELECT 1 FROM pages WHERE id = ?").first([.integer(id)], { _ in true }) != nil
      else { throw TaskerError.notFound(kind: .page, id: id) }
      let files = try attachmentFiles(of: .page(id))
      // Explicitly, not only by the foreign key's ON DELETE CASCADE.
      try connection.prepare("DELETE FROM attachments WHERE page_id = ?").run([.integer(id)])
      try connection.prepare("DELETE FROM pages WHERE id = ?").run([.integer(id)])
      return files
    }
    for file in removed { files.remove(attachmentsDirectory + "/" + file.file) }
    try connection.truncateLog()
    return removed.map(\.id)
  }
}
