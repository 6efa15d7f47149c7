import TaskAttachments
import TaskCrypto

/// Where an attachment's bytes live and the record they are sealed for,
/// derived by the code from the row's id and owner. The row's `file`
/// column is only compared with what the code derives; it is never used as
/// a path.
///
/// Two bindings exist:
/// - **current**: the file is `attachments/<id>` (the id in decimal) and a
///   sealed file is bound to `attachment/<id>/task/<task id>` or
///   `attachment/<id>/page/<page id>`, so a row moved to another owner, or
///   two rows swapped, no longer opens.
/// - **legacy** (rows written before this binding, by a build that named
///   files by 128 random bits): the `file` column is exactly 32 lowercase
///   hex digits and a sealed file is bound to `attachment/<file>` only. Such
///   rows keep opening; the binding names the file, not the owner.
///
/// Anything else is refused: `TaskerError.attachmentRefused`.
struct AttachmentFile: Equatable {
  /// The two naming rules.
  enum Binding: String, Equatable {
    /// `attachments/<id>`, sealed for `attachment/<id>/<owner>`.
    case current
    /// `attachments/<32 hex>`, sealed for `attachment/<32 hex>`.
    case legacy
  }

  /// The file's name inside `attachments/`: never a path, never empty.
  let name: String
  /// The record a sealed file is bound to (its context).
  let record: String
  /// Which rule made `name` and `record`.
  let binding: Binding

  /// The file and record this build gives a new attachment.
  static func current(id: Int64, owner: AttachmentOwner) -> AttachmentFile {
    AttachmentFile(name: String(id), record: "attachment/\(id)/\(owner.record)", binding: .current)
  }

  /// The file and record of a stored row, checked: `file` must be the name
  /// the code gives attachment `id` (`current`), or a legacy name.
  ///
  /// - Parameters:
  ///   - id: the row's id.
  ///   - taskID: the row's `task_id`.
  ///   - pageID: the row's `page_id`; exactly one of the two is set.
  ///   - file: the row's `file` column.
  /// - Throws: `TaskerError.attachmentRefused` naming `attachment/<id>`.
  static func checked(id: Int64, taskID: Int64?, pageID: Int64?, file: String) throws -> AttachmentFile {
    guard id >= 1 else { throw refused(id, "its id is not a positive number") }
    let owner: AttachmentOwner
    switch (taskID, pageID) {
    case (let task?, nil): owner = .task(task)
    case (nil, let page?): owner = .page(page)
    default: throw refused(id, "it belongs to no single task or page")
    }
    let current = current(id: id, owner: owner)
    if file == current.name { return current }
    if isLegacyName(file) { return AttachmentFile(name: file, record: "attachment/" + file, binding: .legacy) }
    throw refused(id, "its file column is not a name Tasker makes")
  }

  /// Whether `file` is a name the builds before the current binding made:
  /// exactly 32 lowercase hex digits (so no separator, no dot).
  static func isLegacyName(_ file: String) -> Bool {
    file.utf8.count == 32 && file.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
  }

  /// The refusal of row `id`.
  static func refused(_ id: Int64, _ reason: String) -> TaskerError {
    .attachmentRefused(record: "attachment/\(id)", reason: reason)
  }
}

/// What the first bytes of an attachment file say, read without a key.
enum AttachmentHeader: Equatable {
  /// No attachment magic: a plain file.
  case plain
  /// Sealed under this key id.
  case sealed(KeyID)
  /// The magic, then a wrapper this build cannot read (cut short, or a
  /// version other than 1): it might use any key.
  case unreadable

  /// Parses the first bytes of a file (up to `Attachment.wrapperByteCount`),
  /// as steps 1-3 of docs/formats/attachment.md do.
  init(prefix: [UInt8]) {
    guard Attachment.isSealed(prefix: prefix) else {
      self = .plain
      return
    }
    guard prefix.count >= Attachment.wrapperByteCount, prefix[8] == Attachment.formatVersion else {
      self = .unreadable
      return
    }
    // The kid: 4 bytes, big-endian, at offset 9.
    self = .sealed(KeyID(rawValue: prefix[9..<13].reduce(0) { $0 << 8 | UInt32($1) }))
  }

  /// Whether the file carries the attachment magic.
  var isSealed: Bool { self != .plain }
}

/// One row of the attachments table, before its file is trusted.
struct AttachmentRow {
  /// The metadata, as stored.
  let record: AttachmentRecord
  /// The `file` column, as stored (unchecked).
  let file: String
  /// The `key_id` column, as stored (a hint only: the file's wrapper says
  /// which key sealed it).
  let keyID: String?

  /// The columns `init(_:)` reads from `attachments`, in order.
  static let columns = "id, task_id, page_id, name, byte_count, media_type, key_id, remote, file"
  /// The same from `gate_undo_attachments`, which keeps no `remote`: a
  /// kept row goes back as one whose content is here.
  static let keptColumns = "id, task_id, page_id, name, byte_count, media_type, key_id, 0, file"

  init(_ row: Statement) {
    record = TaskStore.attachmentRecord(row)
    keyID = row.optionalText(6)
    file = row.text(8)
  }

  /// The checked file and record.
  ///
  /// - Throws: `TaskerError.attachmentRefused`.
  func location() throws -> AttachmentFile {
    try AttachmentFile.checked(id: record.id, taskID: record.taskID, pageID: record.pageID, file: file)
  }

  /// Refuses a row whose file and `key_id` disagree about being sealed: a
  /// row recorded plain whose file carries the magic (never returned raw),
  /// or a row recorded sealed whose file is plain (a sealed file replaced).
  ///
  /// - Throws: `TaskerError.attachmentRefused`.
  func check(fileIsSealed: Bool) throws {
    guard fileIsSealed == record.sealed else {
      throw AttachmentFile.refused(
        record.id,
        fileIsSealed
          ? "its file is sealed but the database records it as plain"
          : "its file is plain but the database records it as sealed")
    }
  }
}

extension TaskStore {
  /// Every attachment row with its content here (not one still at the
  /// sync storage), in id order.
  func attachmentRows() throws -> [AttachmentRow] {
    try connection.prepare("SELECT \(AttachmentRow.columns) FROM attachments WHERE remote = 0 ORDER BY id")
      .rows(AttachmentRow.init)
  }

  /// One attachment row.
  ///
  /// - Throws: `TaskerError.notFound`, `.database`.
  func attachmentRow(id: Int64) throws -> AttachmentRow {
    let row = try connection.prepare("SELECT \(AttachmentRow.columns) FROM attachments WHERE id = ?")
      .first([.integer(id)], AttachmentRow.init)
    guard let row else { throw TaskerError.notFound(kind: .attachment, id: id) }
    return row
  }

  /// One attachment row whose content is here.
  ///
  /// - Throws: `TaskerError.notFound`, `.attachmentNotFetched` (its
  ///   content is still at the sync storage), `.database`.
  func localAttachmentRow(id: Int64) throws -> AttachmentRow {
    let row = try attachmentRow(id: id)
    guard !row.record.remote else { throw TaskerError.attachmentNotFetched(id: id) }
    return row
  }

  /// The checked file names of a task's attachments, for removal after its
  /// rows are deleted: only names the code makes, inside `attachments/`.
  ///
  /// - Throws: `TaskerError.attachmentRefused` for a row whose file column
  ///   is not such a name (the caller's transaction then changes nothing).
  func attachmentFiles(ofTask id: Int64) throws -> [String] {
    try attachmentFiles(of: .task(id)).map(\.file)
  }

  /// The ids and checked file names of a task's or page's attachments, as
  /// `attachmentFiles(ofTask:)`.
  ///
  /// - Throws: `TaskerError.attachmentRefused`, `.database`.
  func attachmentFiles(of owner: AttachmentOwner) throws -> [(id: Int64, file: String)] {
    try attachmentRows(of: owner).map { ($0.record.id, try $0.location().name) }
  }

  /// The rows of a task's or page's attachments, in id order, unchecked.
  ///
  /// - Throws: `TaskerError.database`.
  func attachmentRows(of owner: AttachmentOwner) throws -> [AttachmentRow] {
    // Only the two fixed column names of `AttachmentOwner.column` are joined into the SQL; the id is bound.
    let (column, id) = owner.column
    return try connection.prepare("SELECT \(AttachmentRow.columns) FROM attachments WHERE \(column) = ? ORDER BY id")
      .rows([.integer(id)], AttachmentRow.init)
  }

  /// Reserves the next attachment id, so that a new file can be named and
  /// sealed for it before its row exists (the row is inserted with this id
  /// once the file is on disk: never a row without its file). The
  /// reservation raises the table's AUTOINCREMENT counter in
  /// `sqlite_sequence`, so no other writer is given the same id; it is
  /// above every stored id even when the counter was lowered.
  ///
  /// - Throws: `TaskerError.database`.
  func reserveAttachmentID() throws -> Int64 {
    try connection.transaction { () -> Int64 in
      try connection.prepare(
        """
        INSERT INTO sqlite_sequence (name, seq) SELECT 'attachments', 0
        WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'attachments')
        """
      ).run()
      try connection.prepare(
        """
        UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(id), 0) FROM attachments)) + 1
        WHERE name = 'attachments'
        """
      ).run()
      return try connection.prepare("SELECT max(seq) FROM sqlite_sequence WHERE name = 'attachments'")
        .first { $0.integer(0) } ?? 0
    }
  }

  /// Gives back a reserved id whose add failed, when no later id was
  /// reserved since (so a failed add leaves no gap); otherwise the id
  /// stays unused.
  func releaseAttachmentID(_ id: Int64) {
    try? connection.transaction {
      try connection.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'attachments' AND seq = ?")
        .run([.integer(id - 1), .integer(id)])
    }
  }

  /// The key id each attachment file actually carries, read from the
  /// files' wrappers (no key needed), never from the `key_id` column: a
  /// file put back from before a rewrap counts for the key it carries.
  ///
  /// - Returns: one key id per sealed file, and how many rows could not be
  ///   read (a refused row, a missing or unreadable file, a wrapper of an
  ///   unknown version): they might use any key.
  /// - Throws: `TaskerError.database`.
  func attachmentKeyIDs() throws -> (keys: [KeyID], unreadable: Int) {
    var keys = [KeyID]()
    var unreadable = 0
    for row in try attachmentRows() {
      guard let file = try? row.location(),
        let prefix = try? files.prefix(of: attachmentsDirectory + "/" + file.name, count: Attachment.wrapperByteCount)
      else {
        unreadable += 1
        continue
      }
      switch AttachmentHeader(prefix: prefix) {
      case .plain: continue
      case .sealed(let keyID): keys.append(keyID)
      case .unreadable: unreadable += 1
      }
    }
    return (keys, unreadable)
  }

  /// Moves every sealed attachment file to the keyring's primary key,
  /// choosing the files by the key their wrapper carries (never by the
  /// `key_id` column). Each file is re-sealed for its own record into a
  /// temporary file and renamed over the old one only when the old one
  /// fully verified; then its row names the new key. A crash in between
  /// leaves a file the next run finds already done.
  ///
  /// A sealed file of a legacy row (see `AttachmentFile`) is re-sealed for
  /// the current binding, whatever key it carries: see
  /// `upgradeLegacyAttachment`.
  ///
  /// - Returns: how many files were re-sealed.
  /// - Throws: the key source's errors; `.attachmentRefused` for a row
  ///   whose file name or sealing does not match it; `.attachment` naming
  ///   the first file that does not open; `.system` for a missing file;
  ///   `.database`. Files before the failing one are done.
  @discardableResult
  public func rewrapAttachments() throws -> Int {
    let keyring = try sealer.keyring()
    let primary = keyring.primaryID
    var count = 0
    for row in try attachmentRows() {
      let file = try row.location()
      let path = attachmentsDirectory + "/" + file.name
      let header = AttachmentHeader(prefix: try files.prefix(of: path, count: Attachment.wrapperByteCount))
      try row.check(fileIsSealed: header.isSealed)
      guard header.isSealed else { continue }
      if file.binding == .legacy {
        if try upgradeLegacyAttachment(row, from: file, keyring: keyring) { count += 1 }
        continue
      }
      if header != .sealed(primary) {
        _ = try Self.attachmentCall(file.record) {
          try Attachment.rewrap(file: path, using: keyring, record: file.record)
        }
        count += 1
      }
      if row.keyID != primary.hex {
        try connection.transaction {
          try connection.prepare("UPDATE attachments SET key_id = ? WHERE id = ?")
            .run([.text(primary.hex), .integer(row.record.id)])
        }
      }
    }
    return count
  }

  /// Re-seals the sealed file of a legacy row (bound to `attachment/<file>`
  /// only) for the row's current binding (`attachment/<id>/<owner>`, file
  /// `attachments/<id>`) under the primary key, streaming: the old file is
  /// opened with random access (wrapper, commitment and final chunk checked
  /// first, every chunk verified as it is read) straight into a new
  /// sealer, so no plaintext touches the disk. The new file is written as
  /// `<id>.partial`, flushed and renamed (over a leftover of an
  /// interrupted run, which no row can name); then the row is switched to
  /// it in one transaction, and the old file is removed. A crash before
  /// the switch leaves the row as it was (the next run starts again); a
  /// crash after it leaves the old file unreferenced.
  ///
  /// - Returns: false when the row changed or went meanwhile (the new file
  ///   is removed again unless a row names it).
  /// - Throws: `.attachment` naming the legacy record when the old file
  ///   does not open, `.system`, `.database`.
  func upgradeLegacyAttachment(_ row: AttachmentRow, from legacy: AttachmentFile, keyring: Keyring) throws -> Bool {
    let current = AttachmentFile.current(id: row.record.id, owner: row.record.owner)
    let oldPath = attachmentsDirectory + "/" + legacy.name
    let newPath = attachmentsDirectory + "/" + current.name
    let reader = try Self.attachmentCall(legacy.record) {
      try AttachmentReader(path: oldPath, keyring: keyring, record: legacy.record)
    }
    var offset: UInt64 = 0
    try files.create(newPath) { write in
      _ = try Self.attachmentCall(current.record) {
        try Attachment.seal(
          reading: { buffer in
            let count = Int(min(UInt64(buffer.count), reader.byteCount - offset))
            guard count > 0 else { return 0 }
            try Self.attachmentCall(legacy.record) {
              try reader.read(offset: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]))
            }
            offset += UInt64(count)
            return count
          }, writing: { try write(Array($0)) }, using: keyring, record: current.record)
      }
    }
    let (switched, referenced) = try connection.transaction { () -> (Bool, Bool) in
      try connection.prepare("UPDATE attachments SET file = ?, key_id = ? WHERE id = ? AND file = ?").run([
        .text(current.name), .text(keyring.primaryID.hex), .integer(row.record.id), .text(legacy.name),
      ])
      if connection.changes == 1 { return (true, true) }
      // Another rewrap switched the row first (the new name is its, and as good), or the row went.
      let named = try connection.prepare("SELECT 1 FROM attachments WHERE file = ?")
        .first([.text(current.name)]) { _ in true }
      return (false, named != nil)
    }
    if switched { files.remove(oldPath) }
    if !referenced { files.remove(newPath) }
    return switched
  }
}
