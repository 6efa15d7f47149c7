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
}
