import FoundationEssentials
import TaskAttachments
import TaskCrypto
import TaskSystem

/// The record an attachment belongs to.
public enum AttachmentOwner: Sendable, Equatable {
  /// A task.
  case task(Int64)
  /// A page.
  case page(Int64)

  /// `task/<id>` or `page/<id>`.
  public var record: String {
    switch self {
    case .task(let id): return "task/\(id)"
    case .page(let id): return "page/\(id)"
    }
  }

  /// The column of `attachments` that names the owner (`task_id` or
  /// `page_id`: only these two constants), and the owner's id.
  var column: (name: String, id: Int64) {
    switch self {
    case .task(let id): return ("task_id", id)
    case .page(let id): return ("page_id", id)
    }
  }
}

/// An attachment's metadata. The bytes live in a file beside the database.
public struct AttachmentRecord: Sendable, Equatable, Codable {
  /// The attachment's id.
  public var id: Int64
  /// The task it belongs to, or nil.
  public var taskID: Int64?
  /// The page it belongs to, or nil.
  public var pageID: Int64?
  /// The name the user gave it (stored plain, like titles).
  public var name: String
  /// The size of its content in bytes.
  public var byteCount: Int64
  /// Its media type, for example `application/pdf`.
  public var mediaType: String
  /// Whether its file is sealed.
  public var sealed: Bool
  /// Whether its content is still at the sync storage (it came from
  /// another device and was not fetched yet): there is no file.
  public var remote: Bool

  /// The owner.
  public var owner: AttachmentOwner { taskID.map { .task($0) } ?? .page(pageID ?? 0) }
}

extension TaskStore {
  /// The folder that holds attachment files: `attachments/` beside the database.
  public var attachmentsDirectory: String {
    TaskerFiles.directory(of: databasePath) + "/attachments"
  }

  /// The longest attachment name accepted, in bytes.
  public static let maximumAttachmentNameByteCount = 255

  /// Adds an attachment: streams `read` into a new file beside the
  /// database, then records it.
  ///
  /// The file is sealed with TaskKey's attachment format (under the vault's
  /// primary note key, bound to `attachment/<id>/<owner>`) when attachment
  /// encryption is on, and also when the content itself begins with the
  /// attachment magic, so that a plain file can never pass for a sealed
  /// one; otherwise it is copied plain. The file is named by the code from
  /// the attachment's id (reserved first), never by `name`.
  ///
  /// - Parameters:
  ///   - owner: the task or page it belongs to.
  ///   - name: its name, 1 to 255 bytes without control characters.
  ///   - mediaType: its media type, under the same rule.
  ///   - read: returns the next bytes of the content, empty at the end.
  /// - Returns: the new attachment's record.
  /// - Throws: `TaskerError.notFound` (owner), `.invalidValue` (name), the
  ///   key source's errors when sealing (nothing written), `.attachment`,
  ///   `.fileAccess`, `.database`. On any error no file and no row remain.
  @discardableResult
  public func addAttachment(
    to owner: AttachmentOwner, name: String, mediaType: String, read: @escaping () throws -> [UInt8]
  ) throws -> AttachmentRecord {
    try Self.check(attachmentName: name, field: "attachment name")
    try Self.check(attachmentName: mediaType, field: "media type")
    try requireOwner(owner)
    let source = ChunkSource(read)
    let seal = try attachmentEncryption() || Attachment.isSealed(prefix: try source.peek(Attachment.magic.count))
    let keyring = seal ? try sealer.keyring() : nil
    try files.prepareDirectory(attachmentsDirectory)
    let id = try reserveAttachmentID()
    let file = AttachmentFile.current(id: id, owner: owner)
    let path = attachmentsDirectory + "/" + file.name
    var byteCount: Int64 = 0
    var written = false
    do {
      try files.create(path) { write in
        byteCount = try Self.writeContent(source, sealedWith: keyring, for: file, to: write)
      }
      written = true
      try connection.transaction {
        try requireOwner(owner)
        if let keyring { try sealer.requirePrimary(keyring.primaryID, record: file.record) }
        let (task, page) = Self.ownerColumns(owner)
        try connection.prepare(
          """
          INSERT INTO attachments (id, task_id, page_id, name, byte_count, media_type, file, key_id, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
          """
        ).run([
          .integer(id), task, page, .text(name), .integer(byteCount), .text(mediaType), .text(file.name),
          keyring.map { .text($0.primaryID.hex) } ?? .null, .integer(Self.now()),
        ])
      }
    } catch {
      // Only a file this call made is removed; a name that existed before is left alone.
      if written { files.remove(path) }
      releaseAttachmentID(id)
      throw error
    }
    return try attachment(id: id)
  }

  /// Adds the file at `sourcePath` as an attachment, streaming it.
  ///
  /// - Throws: as `addAttachment(to:name:mediaType:read:)`, and
  ///   `.system` when the source cannot be read.
  @discardableResult
  public func addAttachment(to owner: AttachmentOwner, copying sourcePath: String, name: String, mediaType: String)
    throws -> AttachmentRecord
  {
    let source = try files.reader(sourcePath)
    return try addAttachment(to: owner, name: name, mediaType: mediaType) { try source.next() }
  }

  /// The attachments of one record, or of every record when `owner` is nil.
  ///
  /// - Throws: `TaskerError.database`.
  public func attachments(of owner: AttachmentOwner? = nil) throws -> [AttachmentRecord] {
    guard let owner else {
      return try connection.prepare("SELECT \(AttachmentRow.columns) FROM attachments ORDER BY id")
        .rows(AttachmentRow.init).map(\.record)
    }
    return try attachmentRows(of: owner).map(\.record)
  }

  /// One attachment's record.
  ///
  /// - Throws: `TaskerError.notFound`, `.database`.
  public func attachment(id: Int64) throws -> AttachmentRecord {
    try attachmentRow(id: id).record
  }

  /// Streams an attachment's content to `write`, one chunk at a time, so
  /// memory use does not grow with the file's size. A sealed file is
  /// verified chunk by chunk: `write` receives only authenticated bytes,
  /// but when a later chunk fails it has had the earlier ones, so a caller
  /// writing to a file keeps them under a temporary name.
  ///
  /// The row is checked before any byte is read: its file must be the name
  /// the code gives it (see `AttachmentFile`), and the file must be sealed
  /// exactly when the row records it sealed; a sealed file opens only for
  /// its own id and owner (current binding).
  ///
  /// - Throws: `TaskerError.notFound`; `.attachmentRefused` (nothing
  ///   written); `.system` (missing file); `.fileAccess` (a size that
  ///   differs from the record); the key source's errors and `.attachment`
  ///   for a sealed file; what `write` throws.
  public func readAttachment(id: Int64, to write: ([UInt8]) throws -> Void) throws {
    let row = try localAttachmentRow(id: id)
    let file = try row.location()
    let path = attachmentsDirectory + "/" + file.name
    let reader = try files.reader(path)
    let source = ChunkSource { try reader.next() }
    try row.check(fileIsSealed: Attachment.isSealed(prefix: try source.peek(Attachment.magic.count)))
    let record = row.record
    var count: Int64 = 0
    if record.sealed {
      let keyring = try sealer.keyring()
      let summary = try Self.attachmentCall(file.record) {
        try Attachment.open(
          reading: source.fill, writing: { try write(Array($0)) }, using: keyring, record: file.record)
      }
      count = Int64(summary.plaintextByteCount)
    } else {
      while case let chunk = try source.next(), !chunk.isEmpty {
        count += Int64(chunk.count)
        guard count <= record.byteCount else { break }
        try write(chunk)
      }
    }
    guard count == record.byteCount else {
      throw TaskerError.fileAccess(
        path: path, reason: "the file holds \(count > record.byteCount ? "more" : "fewer") bytes than recorded")
    }
  }

  /// Writes attachment `id`'s content to a new file at `path` (mode 0600,
  /// never through a symbolic link, never replacing a file). The content
  /// goes to a temporary file beside it (`.<name>.tasker-<16 hex>`), which
  /// is flushed and given the real name only after the whole content was
  /// read and, when sealed, verified: a failed or killed read never leaves
  /// anything under `path`.
  ///
  /// - Throws: `TaskerError.outputExists` when `path` exists; as
  ///   `readAttachment(id:to:)`; `.system` for the new file.
  public func writeAttachment(id: Int64, toNewFile path: String) throws {
    let exists = TaskerError.outputExists(path: path)
    guard !FileStatus.exists(path) else { throw exists }
    do {
      try files.create(path, replacing: false) { write in try readAttachment(id: id, to: write) }
    } catch TaskerError.system(let error) where error.isAlreadyExisting {
      throw exists
    }
  }

  /// Removes one attachment: its row, then its file.
  ///
  /// The row is checked first: the file removed is the one the code
  /// derives from the row's id and owner (`attachments/<id>`, or a legacy
  /// 32-hex name, see `AttachmentFile`); the `file` column is only compared
  /// with it, never used as a path, so a row pointing elsewhere is refused
  /// and nothing is removed. The row goes in one transaction, overwritten
  /// with zeros (`secure_delete`), and the log is then checkpointed and
  /// truncated so no copy of the row's name stays in `-wal`; the file is
  /// unlinked after the commit, as `deleteTask(id:)` does: a crash in
  /// between leaves an unreferenced file, never a row without its file.
  /// Unlinking does not overwrite the file's blocks (SECURITY.md §14.20).
  ///
  /// - Returns: the removed attachment's record.
  /// - Throws: `TaskerError.notFound`; `.attachmentRefused` (nothing
  ///   changed); `.database`.
  @discardableResult
  public func removeAttachment(id: Int64) throws -> AttachmentRecord {
    let (record, file) = try connection.transaction { () -> (AttachmentRecord, AttachmentFile) in
      let row = try attachmentRow(id: id)
      let file = try row.location()
      try connection.prepare("DELETE FROM attachments WHERE id = ? AND file = ?")
        .run([.integer(id), .text(file.name)])
      return (row.record, file)
    }
    files.remove(attachmentsDirectory + "/" + file.name)
    try connection.truncateLog()
    return record
  }

  /// Streams `source` to `write`, sealed for `file`'s record under
  /// `keyring` when one is given, copied as it is otherwise.
  ///
  /// - Returns: the content's length in bytes.
  /// - Throws: `.attachment`, and what `source` and `write` throw.
  static func writeContent(
    _ source: ChunkSource, sealedWith keyring: Keyring?, for file: AttachmentFile, to write: ([UInt8]) throws -> Void
  ) throws -> Int64 {
    if let keyring {
      let summary = try attachmentCall(file.record) {
        try Attachment.seal(
          reading: source.fill, writing: { try write(Array($0)) }, using: keyring, record: file.record)
      }
      return Int64(summary.plaintextByteCount)
    }
    var byteCount: Int64 = 0
    while case let chunk = try source.next(), !chunk.isEmpty {
      byteCount += Int64(chunk.count)
      try write(chunk)
    }
    return byteCount
  }

  /// Runs a TaskAttachments call, naming the record in any error.
  static func attachmentCall<Result>(_ record: String, _ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch let error as AttachmentError {
      throw TaskerError.attachment(record: record, cause: error)
    }
  }

  func requireOwner(_ owner: AttachmentOwner) throws {
    switch owner {
    case .task(let id): try requireTask(id)
    case .page(let id):
      guard try connection.prepare("SELECT 1 FROM pages WHERE id = ?").first([.integer(id)], { _ in true }) != nil
      else { throw TaskerError.notFound(kind: .page, id: id) }
    }
  }

  static func ownerColumns(_ owner: AttachmentOwner) -> (SQLValue, SQLValue) {
    switch owner {
    case .task(let id): return (.integer(id), .null)
    case .page(let id): return (.null, .integer(id))
    }
  }

  /// The record of a row read with `AttachmentRow.columns`.
  static func attachmentRecord(_ row: Statement) -> AttachmentRecord {
    AttachmentRecord(
      id: row.integer(0), taskID: row.optionalInteger(1), pageID: row.optionalInteger(2), name: row.text(3),
      byteCount: row.integer(4), mediaType: row.text(5), sealed: row.optionalText(6) != nil,
      remote: row.integer(7) == 1)
  }

  static func check(attachmentName name: String, field: String) throws {
    guard !name.isEmpty, name.utf8.count <= maximumAttachmentNameByteCount else {
      throw TaskerError.invalidValue(field: field, reason: "must be 1 to 255 bytes")
    }
    guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
      throw TaskerError.invalidValue(field: field, reason: "must not contain control characters")
    }
  }
}

/// Adapts a source of byte chunks to the buffer-filling reads that
/// TaskAttachments takes, with a look at the first bytes.
final class ChunkSource {
  private let read: () throws -> [UInt8]
  private var pending: [UInt8] = []
  private var offset = 0

  init(_ read: @escaping () throws -> [UInt8]) {
    self.read = read
  }

  /// The first `count` bytes (fewer at the end of the input), without consuming them.
  func peek(_ count: Int) throws -> [UInt8] {
    while pending.count - offset < count {
      let chunk = try read()
      if chunk.isEmpty { break }
      pending = Array(pending[offset...]) + chunk
      offset = 0
    }
    return Array(pending[offset..<min(pending.count, offset + count)])
  }

  /// The next chunk; empty at the end.
  func next() throws -> [UInt8] {
    guard offset < pending.count else { return try read() }
    defer {
      pending = []
      offset = 0
    }
    return Array(pending[offset...])
  }

  /// Fills `buffer` from the input; 0 only at the end.
  func fill(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    if offset >= pending.count {
      pending = try read()
      offset = 0
      if pending.isEmpty { return 0 }
    }
    let count = min(buffer.count, pending.count - offset)
    pending.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
    offset += count
    return count
  }
}
