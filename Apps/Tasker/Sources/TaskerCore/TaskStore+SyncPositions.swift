import FoundationEssentials

/// A device the store has read objects from, and how far.
public struct SyncDeviceRow: Sendable, Equatable {
  /// The device's id, 32 hex digits.
  public var device: String
  /// Its name, from its first object.
  public var name: String?
  /// The last seq applied (0: none yet).
  public var lastSeq: UInt64
  /// The `made` time of that object (the writer's clock).
  public var lastMade: Int64?
  /// When this device last read one of its objects (this device's clock).
  public var lastSeen: Int64?

  /// A row.
  public init(device: String, name: String?, lastSeq: UInt64, lastMade: Int64?, lastSeen: Int64?) {
    self.device = device
    self.name = name
    self.lastSeq = lastSeq
    self.lastMade = lastMade
    self.lastSeen = lastSeen
  }
}

extension SyncRows {
  // MARK: - Other devices

  /// The devices read so far, by id.
  public func devices() throws -> [SyncDeviceRow] {
    try store.connection.prepare(
      "SELECT device, name, last_seq, last_made, last_seen FROM sync_devices ORDER BY device"
    )
    .rows {
      SyncDeviceRow(
        device: $0.text(0), name: $0.optionalText(1), lastSeq: UInt64(max(0, $0.integer(2))),
        lastMade: $0.optionalInteger(3), lastSeen: $0.optionalInteger(4))
    }
  }

  /// Records how far `row.device` has been read.
  public func putDevice(_ row: SyncDeviceRow) throws {
    try store.connection.prepare(
      """
      INSERT INTO sync_devices (device, name, last_seq, last_made, last_seen) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (device) DO UPDATE SET name = excluded.name, last_seq = excluded.last_seq,
        last_made = excluded.last_made, last_seen = excluded.last_seen
      """
    ).run([
      .text(row.device), row.name.map(SQLValue.text) ?? .null, .integer(Int64(row.lastSeq)),
      row.lastMade.map(SQLValue.integer) ?? .null, row.lastSeen.map(SQLValue.integer) ?? .null,
    ])
  }

  // MARK: - Objects not yet uploaded

  /// The seqs of the objects made but not yet known to be at the storage, in order.
  public func outboxSeqs() throws -> [UInt64] {
    try store.connection.prepare("SELECT seq FROM sync_outbox ORDER BY seq").rows { UInt64($0.integer(0)) }
  }

  /// The object at `seq` in the outbox, nil when it has left.
  public func outboxObject(seq: UInt64) throws -> [UInt8]? {
    try store.connection.prepare("SELECT object FROM sync_outbox WHERE seq = ?").first([.integer(Int64(seq))]) {
      $0.blob(0)
    }
  }

  /// Keeps an object to upload.
  public func addToOutbox(seq: UInt64, object: [UInt8]) throws {
    try store.connection.prepare("INSERT INTO sync_outbox (seq, object) VALUES (?, ?)")
      .run([.integer(Int64(seq)), .blob(object)])
  }

  /// Forgets an object the storage holds.
  public func removeFromOutbox(seq: UInt64) throws {
    try store.connection.prepare("DELETE FROM sync_outbox WHERE seq = ?").run([.integer(Int64(seq))])
  }

  // MARK: - Named values

  /// A named value of the sync tables (the clock, the next seq).
  public func value(_ name: String) throws -> String? {
    try store.connection.prepare("SELECT value FROM sync_values WHERE name = ?").first([.text(name)]) { $0.text(0) }
  }

  /// Sets a named value.
  public func setValue(_ name: String, _ value: String) throws {
    try store.connection.prepare(
      "INSERT INTO sync_values (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value"
    ).run([.text(name), .text(value)])
  }

  /// Forgets the devices, the outbox and the named values (`sync off`)
  /// but the blobs kept to be removed (`keepDeletedBlobs`): the records
  /// keep their identities, so setting up again with the same storage
  /// makes no duplicates.
  public func forgetTarget() throws {
    try store.connection.execute("DELETE FROM sync_devices; DELETE FROM sync_outbox;")
    try store.connection.prepare("DELETE FROM sync_values WHERE name NOT GLOB ? AND name NOT GLOB ?")
      .run([.text(Self.keptBlobPrefix + "*"), .text(Self.formerDevicePrefix + "*")])
  }
}

extension TaskStore {
  /// Removes attachment files whose rows a committed sync step deleted.
  public func removeAttachmentFiles(_ names: [String]) {
    for name in names { files.remove(attachmentsDirectory + "/" + name) }
  }

}
