import FoundationEssentials
import TaskAttachments
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
    TaskerFiles.directory(of: databasePath) + "/attachments"
  }

  /// The longest attachment name accepted, in bytes.
  public static let maximumAttachmentNameByteCount = 255

  /// Adds an attachment: streams `read` into a new file beside the
  /// database, then records it.
  ///
  /// The file is sealed with TaskKey's attachment format (under the vault's
  /// primary note key, bound to `attachment/<file>`) when attachment
  /// encryption is on, and also when the content itself begins with the
  /// attachment magic, so that a plain file can never pass for a sealed
  /// one; otherwise it is copied plain. The file is named by 128 random
  /// bits, never by `name`.
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
    let file = SecureRandom.bytes(count: 16).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    let path = attachmentsDirectory + "/" + file
    let record = Self.attachmentRecordName(file)
    var byteCount: Int64 = 0
    try files.create(path) { write in
      if let keyring {
        let summary = try Self.attachmentCall(record) {
          try Attachment.seal(
            reading: source.fill, writing: { try write(Array($0)) }, using: keyring, record: record)
        }
        byteCount = Int64(summary.plaintextByteCount)
      } else {
        while case let chunk = try source.next(), !chunk.isEmpty {
          byteCount += Int64(chunk.count)
          try write(chunk)
        }
      }
    }
    do {
      let id = try connection.transaction { () -> Int64 in
        try requireOwner(owner)
        let (task, page) = Self.ownerColumns(owner)
        try connection.prepare(
          """
          INSERT INTO attachments (task_id, page_id, name, byte_count, media_type, file, key_id, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?)
          """
        ).run([
          task, page, .text(name), .integer(byteCount), .text(mediaType), .text(file),
          keyring.map { .text($0.primaryID.hex) } ?? .null, .integer(Self.now()),
        ])
        return connection.lastInsertedRowID
      }
      return try attachment(id: id)
    } catch {
      files.remove(path)
      throw error
    }
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
  /// memory use does not grow with the file's size. A sealed file is
  /// verified chunk by chunk: `write` receives only authenticated bytes,
  /// but when a later chunk fails it has had the earlier ones, so a caller
  /// writing to a file removes it on error.
  ///
  /// - Throws: `TaskerError.notFound`, `.fileAccess` (missing file, or a
  ///   size that differs from the record), the key source's errors and
  ///   `.attachment` for a sealed file, what `write` throws.
  public func readAttachment(id: Int64, to write: ([UInt8]) throws -> Void) throws {
    let (record, file) = try attachmentRow(id: id)
    let path = attachmentsDirectory + "/" + file
    let reader = try files.reader(path)
    let source = ChunkSource { try reader.next() }
    var count: Int64 = 0
    if record.sealed {
      let keyring = try sealer.keyring()
      let name = Self.attachmentRecordName(file)
      let summary = try Self.attachmentCall(name) {
        try Attachment.open(reading: source.fill, writing: { try write(Array($0)) }, using: keyring, record: name)
      }
      guard summary.isSealed else {
        throw TaskerError.fileAccess(path: path, reason: "the file is plain but recorded as sealed")
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

  /// Moves every sealed attachment to the keyring's primary key. Each file
  /// is re-sealed into a temporary file and renamed over the old one only
  /// when the old one fully verified; then its row names the new key. A
  /// crash in between leaves a row naming the old key, so `keyUsage` keeps
  /// reporting that key in use (it fails closed) until the next run.
  ///
  /// - Returns: how many files were re-sealed.
  /// - Throws: the key source's errors, `.attachment` naming the first file
  ///   that does not open (files before it are done), `.database`.
  @discardableResult
  public func rewrapAttachments() throws -> Int {
    let keyring = try sealer.keyring()
    let primary = keyring.primaryID.hex
    let rows = try connection.prepare(
      "SELECT id, file FROM attachments WHERE key_id IS NOT NULL AND key_id <> ? ORDER BY id"
    ).rows([.text(primary)]) { ($0.integer(0), $0.text(1)) }
    for (id, file) in rows {
      let record = Self.attachmentRecordName(file)
      _ = try Self.attachmentCall(record) {
        try Attachment.rewrap(file: attachmentsDirectory + "/" + file, using: keyring, record: record)
      }
      try connection.transaction {
        try connection.prepare("UPDATE attachments SET key_id = ? WHERE id = ?").run([.text(primary), .integer(id)])
      }
    }
    return rows.count
  }

  /// The record a sealed attachment file is bound to: `attachment/<file>`.
  static func attachmentRecordName(_ file: String) -> String { "attachment/" + file }

  /// Runs a TaskAttachments call, naming the record in any error.
  static func attachmentCall<Result>(_ record: String, _ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch let error as AttachmentError {
      throw TaskerError.attachment(record: record, cause: error)
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
