import Foundation
import TaskCrypto

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

  /// The owner.
  public var owner: AttachmentOwner { taskID.map { .task($0) } ?? .page(pageID ?? 0) }
}

extension TaskStore {
  /// The folder that holds attachment files: `attachments/` beside the database.
  public var attachmentsDirectory: String {
    (databasePath as NSString).deletingLastPathComponent + "/attachments"
  }

  /// The longest attachment name accepted, in bytes.
  public static let maximumAttachmentNameByteCount = 255

  /// Adds an attachment: streams `read` into a new file beside the
  /// database (sealed when attachment encryption is on), then records it.
  ///
  /// - Parameters:
  ///   - owner: the task or page it belongs to.
  ///   - name: its name, 1 to 255 bytes without control characters.
  ///   - mediaType: its media type, under the same rule.
  ///   - read: returns the next bytes of the content, empty at the end.
  /// - Returns: the new attachment's record.
  /// - Throws: `TaskerError.notFound` (owner), `.invalidValue` (name), the
  ///   key source's errors when sealing (nothing written), `.fileAccess`,
  ///   `.database`. On any error no file and no row remain.
  @discardableResult
  public func addAttachment(
    to owner: AttachmentOwner, name: String, mediaType: String, read: () throws -> [UInt8]
  ) throws -> AttachmentRecord {
    try Self.check(attachmentName: name, field: "attachment name")
    try Self.check(attachmentName: mediaType, field: "media type")
    try requireOwner(owner)
    let sealing = try attachmentEncryption()
    if sealing { _ = try sealer.keyring() }
    try AttachmentFile.prepareDirectory(attachmentsDirectory)
    let file = SecureRandom.bytes(count: 16).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    let path = attachmentsDirectory + "/" + file
    var byteCount: Int64 = 0
    try AttachmentFile.create(path) { write in
      while true {
        let chunk = try read()
        if chunk.isEmpty { break }
        byteCount += Int64(chunk.count)
        try write(chunk)
      }
    }
    do {
      let id = try connection.transaction { () -> Int64 in
        try requireOwner(owner)
        let (task, page) = Self.ownerColumns(owner)
        try connection.prepare(
          """
          INSERT INTO attachments (task_id, page_id, name, byte_count, media_type, file, key_id, created_at)
          VALUES (?, ?, ?, ?, ?, ?, NULL, ?)
          """
        ).run([task, page, .text(name), .integer(byteCount), .text(mediaType), .text(file), .integer(Self.now())])
        return connection.lastInsertedRowID
      }
      return try attachment(id: id)
    } catch {
      AttachmentFile.remove(path)
      throw error
    }
  }

  /// Adds the file at `sourcePath` as an attachment, streaming it.
  ///
  /// - Throws: as `addAttachment(to:name:mediaType:read:)`, and
  ///   `.fileAccess` when the source cannot be read.
  @discardableResult
  public func addAttachment(to owner: AttachmentOwner, copying sourcePath: String, name: String, mediaType: String)
    throws -> AttachmentRecord
  {
    let source = try AttachmentFile.openForReading(sourcePath)
    defer { try? source.close() }
    return try addAttachment(to: owner, name: name, mediaType: mediaType) {
      try AttachmentFile.readChunk(source, path: sourcePath)
    }
  }

  /// The attachments of one record, or of every record when `owner` is nil.
  ///
  /// - Throws: `TaskerError.database`.
  public func attachments(of owner: AttachmentOwner? = nil) throws -> [AttachmentRecord] {
    let columns = "id, task_id, page_id, name, byte_count, media_type, key_id"
    switch owner {
    case nil:
      return try connection.prepare("SELECT \(columns) FROM attachments ORDER BY id").rows(Self.attachmentRecord)
    case .task(let id):
      return try connection.prepare("SELECT \(columns) FROM attachments WHERE task_id = ? ORDER BY id")
        .rows([.integer(id)], Self.attachmentRecord)
    case .page(let id):
      return try connection.prepare("SELECT \(columns) FROM attachments WHERE page_id = ? ORDER BY id")
        .rows([.integer(id)], Self.attachmentRecord)
    }
  }

  /// One attachment's record.
  ///
  /// - Throws: `TaskerError.notFound`, `.database`.
  public func attachment(id: Int64) throws -> AttachmentRecord {
    try attachmentRow(id: id).record
  }

  /// Streams an attachment's content to `write`, one chunk at a time, so
  /// memory use does not grow with the file's size.
  ///
  /// - Throws: `TaskerError.notFound`, `.fileAccess` (missing file, or a
  ///   size that differs from the record), the key source's errors and
  ///   `.sealedBodyUnreadable` for a sealed file, what `write` throws.
  public func readAttachment(id: Int64, to write: ([UInt8]) throws -> Void) throws {
    let (record, file) = try attachmentRow(id: id)
    let path = attachmentsDirectory + "/" + file
    let handle = try AttachmentFile.openForReading(path)
    defer { try? handle.close() }
    var count: Int64 = 0
    while true {
      let chunk = try AttachmentFile.readChunk(handle, path: path)
      if chunk.isEmpty { break }
      count += Int64(chunk.count)
      guard count <= record.byteCount else { break }
      try write(chunk)
    }
    guard count == record.byteCount else {
      throw TaskerError.fileAccess(
        path: path, reason: "the file holds \(count > record.byteCount ? "more" : "fewer") bytes than recorded")
    }
  }

  func attachmentRow(id: Int64) throws -> (record: AttachmentRecord, file: String) {
    let row = try connection.prepare(
      "SELECT id, task_id, page_id, name, byte_count, media_type, key_id, file FROM attachments WHERE id = ?"
    ).first([.integer(id)]) { (Self.attachmentRecord($0), $0.text(7)) }
    guard let row else { throw TaskerError.notFound(kind: .attachment, id: id) }
    return row
  }

  /// The file names of a task's attachments, for removal after its rows are deleted.
  func attachmentFiles(ofTask id: Int64) throws -> [String] {
    try connection.prepare("SELECT file FROM attachments WHERE task_id = ?").rows([.integer(id)]) { $0.text(0) }
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

  static func attachmentRecord(_ row: Statement) -> AttachmentRecord {
    AttachmentRecord(
      id: row.integer(0), taskID: row.optionalInteger(1), pageID: row.optionalInteger(2), name: row.text(3),
      byteCount: row.integer(4), mediaType: row.text(5), sealed: row.optionalText(6) != nil)
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

extension String {
  func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
