import TaskCrypto

/// The storage a device syncs through: dumb storage that lists, reads and
/// creates names, with no server logic, no lock and no compare-and-swap
/// (docs/formats/sync-storage.md, *Layout at the storage*). Every byte it
/// returns is data: the engine checks it before use.
public protocol SyncTarget {
  /// Where it is, for messages (a path or a URL).
  var location: String { get }

  /// Makes the root's folders when they are missing (setup only).
  ///
  /// - Throws: `SyncError.targetMissing`, `.targetUnsafe`, `.storage`.
  func prepare() throws

  /// The marker's bytes, or nil when there is none.
  ///
  /// - Throws: `SyncError.storage`, `.targetUnsafe`.
  func readMarker() throws -> [UInt8]?

  /// Writes the marker as a new name.
  ///
  /// - Returns: false when a marker exists already (nothing written).
  /// - Throws: `SyncError.storage`, `.targetUnsafe`.
  func createMarker(_ bytes: [UInt8]) throws -> Bool

  /// The device ids that have a folder, as the names read (checked by the
  /// caller); names that are not 32 lowercase hex digits are left out.
  ///
  /// - Throws: `SyncError.storage`, `.targetUnsafe`.
  func devices() throws -> [String]

  /// The seqs present for `device`, sorted; names that are not 16
  /// lowercase hex digits are left out.
  ///
  /// - Throws: `SyncError.storage`, `.targetUnsafe`.
  func sequence(of device: String) throws -> [UInt64]

  /// The bytes of `device`'s object `seq`, or nil when there is none; at
  /// most `limit` bytes are read (a larger one is returned cut to
  /// `limit + 1` bytes, so the reader refuses it as too large).
  ///
  /// - Throws: `SyncError.storage`, `.targetUnsafe`.
  func read(device: String, seq: UInt64, limit: Int) throws -> [UInt8]?

  /// Writes `device`'s object `seq` as a new name, never over another:
  /// it appears whole or not at all.
  ///
  /// - Returns: `.created`, or `.existed(bytes)` with what is there.
  /// - Throws: `SyncError.storage`, `.targetUnsafe`.
  func create(device: String, seq: UInt64, bytes: [UInt8]) throws -> SyncCreation

  /// Writes `device`'s blob `blob` (32 hex) as a new name, its
  /// `byteCount` bytes pulled from `read` (which fills a buffer and gives 0
  /// at the end) as they are sent: it appears whole or not at all, never
  /// over another, and a `read` that throws leaves nothing of it.
  ///
  /// - Returns: false when the name existed already (a reader checks
  ///   whatever is there).
  /// - Throws: `SyncError.storage`, `.targetUnsafe`, `.network`; `read`'s
  ///   errors (through the transport's own for a WebDAV target).
  func createBlob(
    device: String, blob: String, byteCount: UInt64, read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int
  ) throws -> Bool

  /// Streams `device`'s blob `blob` into `write` in order, at most
  /// `limit` bytes (a larger one is cut at `limit + 1`, so the reader
  /// refuses it as too large). A failure part-way may follow bytes
  /// already written: the caller keeps nothing until this returns.
  ///
  /// - Returns: false when there is none (nothing written).
  /// - Throws: `SyncError.storage`, `.targetUnsafe`, the errors of `write`.
  func readBlob(device: String, blob: String, limit: UInt64, into write: (UnsafeRawBufferPointer) throws -> Void)
    throws -> Bool

  /// Removes `device`'s object `seq` (this device's own, by compaction);
  /// one that is gone already is fine.
  ///
  /// - Throws: `SyncError.storage`, `.targetUnsafe`.
  func remove(device: String, seq: UInt64) throws

  /// Removes `device`'s blob `blob` (this device's own, once every device
  /// it knows has the deletion of its attachment); one that is gone
  /// already is fine.
  ///
  /// - Throws: `SyncError.storage`, `.targetUnsafe`.
  func removeBlob(device: String, blob: String) throws

  /// Removes what `device`'s own interrupted writes left behind (a folder
  /// target's temporaries named after it), never another device's; called
  /// at the start of each of `device`'s syncs, under its sync lock.
  ///
  /// - Throws: `SyncError.storage`, `.targetUnsafe`.
  func removeTemporaries(of device: String) throws
}

extension SyncTarget {
  /// Nothing to remove: a target whose writes leave no temporaries behind.
  public func removeTemporaries(of device: String) throws {}
}

/// What `SyncTarget.create` found.
public enum SyncCreation: Equatable, Sendable {
  /// The name is new and holds the bytes.
  case created
  /// The name existed; these are its bytes (the caller compares).
  case existed([UInt8])
}

/// The name of an object's seq: 16 lowercase hex digits.
public func syncSeqName(_ seq: UInt64) -> String { Hex.encode(SyncObjectFormat.bigEndian(seq)) }
