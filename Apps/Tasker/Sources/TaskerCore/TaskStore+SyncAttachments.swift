import CommandKit
import FoundationEssentials
import TaskAttachments
import TaskCrypto
import TaskSystem

/// The store's side of syncing attachments (docs/formats/sync-storage.md,
/// *Attachments*): attachment rows noted as changed, rows whose content is
/// still at the storage (`remote`), the blobs not yet uploaded and the
/// attachments waiting for their owner to arrive.
extension TaskStore {
  /// Version 10: `sync_records` and `sync_dirty` take the kind
  /// `attachment` (both rebuilt, their rows copied), attachment rows are
  /// noted when added or removed, `attachments.remote` marks a row whose
  /// content has not been fetched, `sync_blobs` lists the blobs to upload
  /// and `sync_waiting` the attachments whose owner is not shown yet.
  static let syncAttachmentsMigration =
    """
    DROP TRIGGER sync_task_added; DROP TRIGGER sync_task_changed; DROP TRIGGER sync_task_deleted;
    DROP TRIGGER sync_page_added; DROP TRIGGER sync_page_changed; DROP TRIGGER sync_page_deleted;
    CREATE TABLE sync_records_10 (
      kind TEXT NOT NULL CHECK (kind IN ('task', 'page', 'attachment')),
      uid TEXT NOT NULL CHECK (length(uid) = 32 AND uid NOT GLOB '*[^0-9a-f]*'),
      local_id INTEGER,
      state TEXT NOT NULL,
      PRIMARY KEY (kind, uid)
    ) WITHOUT ROWID;
    INSERT INTO sync_records_10 (kind, uid, local_id, state) SELECT kind, uid, local_id, state FROM sync_records;
    DROP TABLE sync_records;
    ALTER TABLE sync_records_10 RENAME TO sync_records;
    CREATE UNIQUE INDEX sync_records_local ON sync_records (kind, local_id) WHERE local_id IS NOT NULL;
    CREATE TABLE sync_dirty_10 (
      kind TEXT NOT NULL CHECK (kind IN ('task', 'page', 'attachment')),
      local_id INTEGER NOT NULL,
      PRIMARY KEY (kind, local_id)
    ) WITHOUT ROWID;
    INSERT INTO sync_dirty_10 (kind, local_id) SELECT kind, local_id FROM sync_dirty;
    DROP TABLE sync_dirty;
    ALTER TABLE sync_dirty_10 RENAME TO sync_dirty;

    """ + syncTriggers
      + """
      CREATE TRIGGER sync_attachment_added AFTER INSERT ON attachments BEGIN
        INSERT OR IGNORE INTO sync_dirty (kind, local_id) VALUES ('attachment', new.id); END;
      CREATE TRIGGER sync_attachment_deleted AFTER DELETE ON attachments BEGIN
        INSERT OR IGNORE INTO sync_dirty (kind, local_id) VALUES ('attachment', old.id); END;
      ALTER TABLE attachments ADD COLUMN remote INTEGER NOT NULL DEFAULT 0 CHECK (remote IN (0, 1));
      CREATE TABLE sync_blobs (
        blob TEXT PRIMARY KEY CHECK (length(blob) = 32 AND blob NOT GLOB '*[^0-9a-f]*'),
        local_id INTEGER NOT NULL,
        uid TEXT NOT NULL CHECK (length(uid) = 32 AND uid NOT GLOB '*[^0-9a-f]*')
      ) WITHOUT ROWID;
      CREATE TABLE sync_waiting (
        uid TEXT PRIMARY KEY CHECK (length(uid) = 32 AND uid NOT GLOB '*[^0-9a-f]*'),
        owner TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX sync_waiting_owner ON sync_waiting (owner);
      """

  /// Keeps the content fetched for a remote attachment: streams `read`
  /// into the row's file (sealed when attachment encryption is on, as
  /// `addAttachment` does) and marks the row local. The file is written
  /// under the name the code gives the row, only when no file has that
  /// name, and the row changes only once the whole content is on disk.
  ///
  /// - Parameters:
  ///   - id: the attachment.
  ///   - read: the next bytes of the content (already verified by the
  ///     caller), empty at the end.
  /// - Throws: `TaskerError.notFound`; `.invalidValue` when the row is not
  ///   remote or the content's length is not the recorded one (nothing
  ///   kept); the key source's errors, `.attachment`, `.system`,
  ///   `.database`.
  public func keepFetchedAttachment(id: Int64, read: @escaping () throws -> [UInt8]) throws {
    let row = try attachmentRow(id: id)
    let file = try row.location()
    guard row.record.remote else {
      throw TaskerError.invalidValue(field: "attachment \(id)", reason: "its content is here already")
    }
    let keyring = try attachmentEncryption() ? try sealer.keyring() : nil
    let source = ChunkSource(read)
    let path = attachmentsDirectory + "/" + file.name
    guard !FileStatus.exists(path) else { throw AttachmentFile.refused(id, "a file already has its name") }
    try files.prepareDirectory(attachmentsDirectory)
    var count: Int64 = 0
    try files.create(path, replacing: false) { write in
      count = try Self.writeContent(source, sealedWith: keyring, for: file, to: write)
      guard count == row.record.byteCount else {
        throw TaskerError.invalidValue(
          field: "attachment \(id)", reason: "the fetched content is not the \(row.record.byteCount) bytes recorded")
      }
    }
    do {
      try connection.transaction {
        try connection.prepare("UPDATE attachments SET remote = 0, key_id = ? WHERE id = ? AND remote = 1")
          .run([keyring.map { .text($0.primaryID.hex) } ?? .null, .integer(id)])
      }
    } catch {
      files.remove(path)
      throw error
    }
  }

  /// The content of a local attachment as chunks of plaintext pulled one
  /// at a time (for sealing it again as a sync blob): the row and its file
  /// checked as `readAttachment` checks them.
  ///
  /// - Returns: a function giving the next chunk, empty at the end; it
  ///   throws `TaskerError.fileAccess` when the file's length is not the
  ///   recorded one.
  /// - Throws: `TaskerError.notFound`, `.attachmentRefused`,
  ///   `.attachmentNotFetched`, the key source's errors, `.attachment`,
  ///   `.system`.
  public func attachmentContent(id: Int64) throws -> () throws -> [UInt8] {
    let row = try localAttachmentRow(id: id)
    let file = try row.location()
    let path = attachmentsDirectory + "/" + file.name
    let expected = UInt64(row.record.byteCount)
    var offset: UInt64 = 0
    guard row.record.sealed else {
      let reader = try files.reader(path)
      let source = ChunkSource { try reader.next() }
      try row.check(fileIsSealed: Attachment.isSealed(prefix: try source.peek(Attachment.magic.count)))
      return {
        let chunk = try source.next()
        offset += UInt64(chunk.count)
        guard offset <= expected, !chunk.isEmpty || offset == expected else {
          throw TaskerError.fileAccess(path: path, reason: "the file's length is not the one recorded")
        }
        return chunk
      }
    }
    let keyring = try sealer.keyring()
    let reader = try Self.attachmentCall(file.record) {
      try AttachmentReader(path: path, keyring: keyring, record: file.record)
    }
    try row.check(fileIsSealed: reader.isSealed)
    guard reader.byteCount == expected else {
      throw TaskerError.fileAccess(path: path, reason: "the file's length is not the one recorded")
    }
    return {
      guard offset < expected else { return [] }
      let count = Int(min(UInt64(TaskerFiles.chunkByteCount), expected - offset))
      let chunk = try Self.attachmentCall(file.record) { try reader.read(offset: offset, count: count) }
      offset += UInt64(chunk.count)
      return chunk
    }
  }
}
