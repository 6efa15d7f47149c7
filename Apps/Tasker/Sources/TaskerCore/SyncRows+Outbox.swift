import TaskCrypto
import TaskSystem

/// An object of the outbox as it was read back.
public enum SyncOutboxObject: Equatable, Sendable {
  /// The object's bytes, exactly as sealed.
  case object([UInt8])
  /// The object's file is missing, unreadable or not the bytes its row's
  /// digest names: it can never be made again (its seq is spent).
  case damaged(path: String)
}

/// Version 12 of the schema and the outbox: the objects made and not yet
/// at the storage.
///
/// Since version 12 an object's bytes live in a file of their own,
/// `<database>.sync-outbox/<seq as 16 hex digits>` (mode 0600, in a 0700
/// folder that is no symlink), and its row keeps only the SHA-256 of those
/// bytes (`digest`, with `object` empty). A first sync of 10^4 tasks wrote
/// 23.5 MiB of objects through SQLite's log, into the database file by the
/// next checkpoint, and freed them again after the upload; a file is
/// written once. Rows of version 11 (the bytes in `object`, no digest) are
/// read as they are.
///
/// Durability is the row's: a file is written and fsynced inside the
/// transaction that adds its row, and its folder fsynced before that
/// transaction commits (`flush`), so a committed row always names a whole
/// file. A file without a row (its transaction rolled back, or killed
/// before the commit) is replaced by the next object of that seq and
/// removed by the next upload (`removeStrayOutboxFiles`, with the write
/// lock held, so no other writer is between a file and its row). A row's
/// file is removed only once the row's deletion has committed.
extension TaskStore {
  /// Version 12: each outbox object's SHA-256 (`digest`), for the objects
  /// kept in files; NULL for an object kept in its row.
  static let syncOutboxFilesMigration = """
    ALTER TABLE sync_outbox ADD COLUMN digest BLOB
      CHECK (digest IS NULL OR (length(digest) = 32 AND length(object) = 0));
    """

  /// The folder of this database's outbox files.
  var syncOutboxDirectory: String { databasePath + ".sync-outbox" }

  /// The file of the outbox object `seq`.
  func syncOutboxFile(_ seq: UInt64) -> String {
    let digits = String(seq, radix: 16)
    return syncOutboxDirectory + "/" + String(repeating: "0", count: max(0, 16 - digits.count)) + digits
  }
}

extension SyncRows {
  // MARK: - Objects not yet uploaded

  /// The seqs of the objects made but not yet known to be at the storage, in order.
  public func outboxSeqs() throws -> [UInt64] {
    try connection.prepare("SELECT seq FROM sync_outbox ORDER BY seq").rows { UInt64($0.integer(0)) }
  }

  /// The object at `seq` in the outbox, nil when it has left; a file that
  /// does not hold the bytes its row names is `.damaged`, never sent.
  ///
  /// - Throws: `TaskerError.database`.
  public func outboxObject(seq: UInt64) throws -> SyncOutboxObject? {
    guard
      let (object, digest) = try connection.prepare("SELECT object, digest FROM sync_outbox WHERE seq = ?")
        .first([.integer(Int64(seq))], { ($0.blob(0), $0.optionalBlob(1)) })
    else { return nil }
    guard let digest else { return .object(object) }
    let path = store.syncOutboxFile(seq)
    // The largest object is 4 MiB and a little: a longer file is not one.
    guard let bytes = try? Self.readFile(path, limit: 8 << 20), SHA256.hash(data: bytes).bytes == digest else {
      return .damaged(path: path)
    }
    return .object(bytes)
  }

  /// Keeps an object to upload: its bytes written and fsynced to its file,
  /// its row added with their digest; the folder is fsynced before the
  /// transaction commits.
  ///
  /// - Throws: `TaskerError.system` (the folder or the file),
  ///   `TaskerError.database`.
  public func addToOutbox(seq: UInt64, object: [UInt8]) throws {
    let path = store.syncOutboxFile(seq)
    try TaskerFiles.system {
      try PrivateDirectory.make(store.syncOutboxDirectory, parents: false, allowingSymlink: false)
      let files = store.files.fileSystem
      // A file of a transaction that never committed holds this seq's name: it was never sent.
      try files.unlink(path)
      let fd = try files.createExclusive(path)
      do {
        try object.withUnsafeBytes { try files.write(fd, $0, path: path) }
        try files.fsync(fd, path: path)
      } catch {
        try? files.close(fd, path: path)
        throw error
      }
      try files.close(fd, path: path)
    }
    memo.outboxWritten = true
    try connection.prepare("INSERT INTO sync_outbox (seq, object, digest) VALUES (?, X'', ?)")
      .run([.integer(Int64(seq)), .blob(SHA256.hash(data: object).bytes)])
  }

  /// Forgets an object the storage holds; its file goes once that is committed.
  ///
  /// - Throws: `TaskerError.database`.
  public func removeFromOutbox(seq: UInt64) throws {
    try connection.prepare("DELETE FROM sync_outbox WHERE seq = ?").run([.integer(Int64(seq))])
    removeOutboxFileAfterCommit(seq)
  }

  /// Forgets every object of the outbox (`sync off`); their files go once
  /// that is committed.
  ///
  /// - Throws: `TaskerError.database`.
  func forgetOutbox() throws {
    for seq in try outboxSeqs() { removeOutboxFileAfterCommit(seq) }
    try connection.execute("DELETE FROM sync_outbox")
  }

  /// Removes the outbox files no row names: those of transactions that
  /// rolled back or were killed. Run inside a write transaction, so no
  /// other writer has a file without its row yet.
  ///
  /// - Throws: `TaskerError.system` when the folder cannot be listed,
  ///   `TaskerError.database`.
  public func removeStrayOutboxFiles() throws {
    let folder = store.syncOutboxDirectory
    guard let names = try TaskerFiles.system({ try DirectoryListing.names(of: folder) }) else { return }
    let kept = Set(
      try connection.prepare("SELECT seq FROM sync_outbox WHERE digest IS NOT NULL").rows { UInt64($0.integer(0)) })
    for name in names where name.utf8.count == 16 {
      guard let seq = UInt64(name, radix: 16), !kept.contains(seq), store.syncOutboxFile(seq) == folder + "/" + name
      else { continue }
      store.files.remove(folder + "/" + name)
    }
  }

  /// Fsyncs the outbox folder when this transaction wrote a file to it
  /// (called by `flush`, before the commit).
  func syncOutboxDirectoryIfWritten() throws {
    guard memo.outboxWritten else { return }
    try TaskerFiles.system { try store.files.fileSystem.fsyncDirectory(store.syncOutboxDirectory) }
    memo.outboxWritten = false
  }

  private func removeOutboxFileAfterCommit(_ seq: UInt64) {
    let (files, path) = (store.files, store.syncOutboxFile(seq))
    connection.afterCommit { files.remove(path) }
  }

  /// The bytes of the file at `path`; nil when it holds more than `limit`.
  private static func readFile(_ path: String, limit: Int) throws -> [UInt8]? {
    let file = try OpenFile.reading(path)
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let read = try buffer.withUnsafeMutableBytes { try file.read(into: $0) }
      if read == 0 { return bytes }
      bytes += buffer[..<read]
      guard bytes.count <= limit else { return nil }
    }
  }
}
