import CommandKit
import TaskCrypto

/// An attachment's row as sync sees it: what the record's fields come from
/// and go to (the content itself stays in its file).
public struct SyncAttachmentRow: Sendable, Equatable {
  /// The task or page it belongs to (local ids).
  public var owner: AttachmentOwner
  /// Its name.
  public var name: String
  /// Its media type.
  public var mediaType: String
  /// Its content's length in bytes.
  public var byteCount: Int64
  /// When it was added, in Unix seconds.
  public var createdAt: Int64
  /// Whether its content is still at the sync storage.
  public var remote: Bool

  /// A row.
  public init(
    owner: AttachmentOwner, name: String, mediaType: String, byteCount: Int64, createdAt: Int64, remote: Bool
  ) {
    self.owner = owner
    self.name = name
    self.mediaType = mediaType
    self.byteCount = byteCount
    self.createdAt = createdAt
    self.remote = remote
  }
}

extension SyncRows {
  // MARK: - Attachment rows

  /// The attachment row `localID`, or nil when there is none.
  ///
  /// - Throws: `TaskerError.database`.
  public func attachmentRow(localID: Int64) throws -> SyncAttachmentRow? {
    try store.connection.prepare(
      "SELECT task_id, page_id, name, media_type, byte_count, created_at, remote FROM attachments WHERE id = ?"
    ).first([.integer(localID)]) { row in
      SyncAttachmentRow(
        owner: row.optionalInteger(0).map(AttachmentOwner.task) ?? .page(row.optionalInteger(1) ?? 0),
        name: row.text(2), mediaType: row.text(3), byteCount: row.integer(4), createdAt: row.integer(5),
        remote: row.integer(6) == 1)
    }
  }

  /// The content of local attachment `localID`, opened and checked as
  /// `TaskStore.attachmentContent(id:)` does: whether it can be sent.
  ///
  /// - Throws: as `TaskStore.attachmentContent(id:)`.
  public func attachmentContent(localID: Int64) throws -> () throws -> [UInt8] {
    try store.attachmentContent(id: localID)
  }

  /// Adds a row for an attachment from another device, its content still
  /// at the storage (`remote`), named as `addAttachment` names rows; the
  /// change is not noted as dirty.
  ///
  /// - Returns: the row's id.
  /// - Throws: `TaskerError.invalidValue` for a name or media type the
  ///   store does not take, `.database`.
  public func addRemoteAttachment(_ row: SyncAttachmentRow) throws -> Int64 {
    try TaskStore.check(attachmentName: row.name, field: "attachment name")
    try TaskStore.check(attachmentName: row.mediaType, field: "media type")
    let id = try store.reserveAttachmentID()
    let file = AttachmentFile.current(id: id, owner: row.owner)
    let (task, page) = TaskStore.ownerColumns(row.owner)
    try store.connection.prepare(
      """
      INSERT INTO attachments (id, task_id, page_id, name, byte_count, media_type, file, key_id, created_at, remote)
      VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, 1)
      """
    ).run([
      .integer(id), task, page, .text(row.name), .integer(row.byteCount), .text(row.mediaType), .text(file.name),
      .integer(row.createdAt),
    ])
    try clearDirty(kind: "attachment", localID: id)
    return id
  }

  /// Deletes an attachment row (applying another device's deletion); the
  /// change is not noted as dirty.
  ///
  /// - Returns: the file to remove once the transaction commits, if any.
  /// - Throws: `TaskerError.attachmentRefused`, `.database`.
  public func deleteAttachmentRow(localID: Int64) throws -> [String] {
    guard let row = try? store.attachmentRow(id: localID) else { return [] }
    let file = try row.location()
    try store.connection.prepare("DELETE FROM attachments WHERE id = ?").run([.integer(localID)])
    try clearDirty(kind: "attachment", localID: localID)
    return [file.name]
  }

  /// Unlinks the synced states of `owner`'s attachments from their rows,
  /// which deleting the owner removes, and forgets those removals (the
  /// deletion came from another device, which wrote the attachments'
  /// deletions itself).
  ///
  /// - Throws: `TaskerError.database`.
  func forgetAttachments(ofDeleted owner: AttachmentOwner) throws {
    for attachment in try store.attachmentRows(of: owner).map(\.record.id) {
      try store.connection.prepare("UPDATE sync_records SET local_id = NULL WHERE kind = 'attachment' AND local_id = ?")
        .run([.integer(attachment)])
      try store.connection.prepare("DELETE FROM sync_dirty WHERE kind = 'attachment' AND local_id = ?")
        .run([.integer(attachment)])
    }
  }

  // MARK: - Blobs to upload

  /// Notes that `blob` (the content of attachment row `localID`, record
  /// `uid`) is to be uploaded.
  ///
  /// - Throws: `TaskerError.database`.
  public func addBlob(_ blob: String, localID: Int64, uid: String) throws {
    try store.connection.prepare("INSERT INTO sync_blobs (blob, local_id, uid) VALUES (?, ?, ?)")
      .run([.text(blob), .integer(localID), .text(uid)])
  }

  /// The blobs still to upload, in name order.
  ///
  /// - Throws: `TaskerError.database`.
  public func blobs() throws -> [(blob: String, localID: Int64, uid: String)] {
    try store.connection.prepare("SELECT blob, local_id, uid FROM sync_blobs ORDER BY blob").rows {
      (blob: $0.text(0), localID: $0.integer(1), uid: $0.text(2))
    }
  }

  /// Forgets a blob once it is uploaded (or its attachment is gone).
  ///
  /// - Throws: `TaskerError.database`.
  public func removeBlob(_ blob: String) throws {
    try store.connection.prepare("DELETE FROM sync_blobs WHERE blob = ?").run([.text(blob)])
  }

  // MARK: - Blobs to remove

  /// Notes that this device's blob `blob` is to be removed from the
  /// storage once every device has the deletion of its attachment, which
  /// `device`'s object `seq` carries (or an earlier one of it); a blob
  /// noted already keeps its first note. Kept as the named value
  /// `deleted-blob:<blob>`, `<device>:<seq>`, then `:<writer>` for a blob
  /// written under an id this database had before (`formerDevices`).
  ///
  /// - Throws: `TaskerError.database`.
  public func noteDeletedBlob(_ blob: String, carriedBy device: String, seq: UInt64, writer: String? = nil) throws {
    let noted = DeletedBlob(blob: blob, device: device, seq: seq, writer: writer)
    try store.connection.prepare("INSERT OR IGNORE INTO sync_values (name, value) VALUES (?, ?)")
      .run([.text(Self.deletedBlobPrefix + blob), .text(noted.value)])
  }

  /// Moves the notes of those of `blobs` that are noted to `device`'s
  /// object `seq`, which now carries their attachments' deletions (sent
  /// again after the object first noted was made void).
  ///
  /// - Throws: as `deletedBlobs`.
  public func moveDeletedBlobs(_ blobs: Set<String>, carriedBy device: String, seq: UInt64) throws {
    guard !blobs.isEmpty else { return }
    for var noted in try deletedBlobs() where blobs.contains(noted.blob) {
      (noted.device, noted.seq) = (device, seq)
      try setValue(Self.deletedBlobPrefix + noted.blob, noted.value)
    }
  }

  /// A blob noted by `noteDeletedBlob` and not yet removed.
  public struct DeletedBlob: Sendable, Equatable {
    /// The blob's name.
    public var blob: String
    /// The device whose object carries its attachment's deletion.
    public var device: String
    /// That object's seq.
    public var seq: UInt64
    /// The device id the blob was written under when it is not this
    /// device's current one (an id this database had before `sync off`),
    /// nil otherwise.
    public var writer: String?

    /// The kept value: `<device>:<seq>`, then `:<writer>` when there is one.
    var value: String { "\(device):\(seq)" + (writer.map { ":" + $0 } ?? "") }
  }

  /// The blobs noted by `noteDeletedBlob` and not yet removed, in name
  /// order, each with the object that carries its attachment's deletion.
  ///
  /// - Throws: `TaskerError.damagedDatabase` for a value that is not
  ///   `<32 hex>:<seq>` (then `:<32 hex>`, the writer, optionally),
  ///   `.database`.
  public func deletedBlobs() throws -> [DeletedBlob] {
    try namedValues(prefix: Self.deletedBlobPrefix).map { row in
      let parts = row.value.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
      let blob = row.key
      guard parts.count == 2 || parts.count == 3, Hex.decode(blob)?.count == 16, Hex.decode(parts[0])?.count == 16,
        let seq = UInt64(parts[1]), parts.count == 2 || Hex.decode(parts[2])?.count == 16
      else {
        throw TaskerError.damagedDatabase(path: "sync_values", reason: "\(row.name) is not a device and a seq")
      }
      return DeletedBlob(blob: blob, device: parts[0], seq: seq, writer: parts.count == 3 ? parts[2] : nil)
    }
  }

  /// Forgets a deleted blob once it is removed from the storage.
  ///
  /// - Throws: `TaskerError.database`.
  public func forgetDeletedBlob(_ blob: String) throws {
    try store.connection.prepare("DELETE FROM sync_values WHERE name = ?").run([.text(Self.deletedBlobPrefix + blob)])
  }

  /// The names of the values `noteDeletedBlob` keeps begin so.
  static let deletedBlobPrefix = "deleted-blob:"

  /// The named values whose names begin with `prefix`, in name order,
  /// each with its whole name and the rest of it after the prefix (`key`).
  private func namedValues(prefix: String) throws -> [(name: String, key: String, value: String)] {
    try store.connection.prepare("SELECT name, value FROM sync_values WHERE name GLOB ? ORDER BY name")
      .rows([.text(prefix + "*")]) {
        (name: $0.text(0), key: String($0.text(0).dropFirst(prefix.count)), value: $0.text(1))
      }
  }

  /// The names of the blobs kept over `sync off` begin so
  /// (`kept-blob:<blob>`, `<target id>:<writer>`); `forgetTarget` keeps them.
  static let keptBlobPrefix = "kept-blob:"

  /// Keeps the blobs still to be removed over `sync off` (`forgetTarget`
  /// follows), each with the target it is at and the device id it was
  /// written under (`device`, this device's, unless noted otherwise).
  ///
  /// - Returns: how many blobs wait.
  /// - Throws: as `deletedBlobs`.
  public func keepDeletedBlobs(targetID: String, device: String) throws -> Int {
    let pending = try deletedBlobs()
    for noted in pending {
      try setValue(Self.keptBlobPrefix + noted.blob, "\(targetID):\(noted.writer ?? device)")
    }
    return pending.count
  }

  /// The names of the device ids this database synced under before `sync
  /// off` begin so (`former-device:<id>`, the target id); `forgetTarget`
  /// keeps them.
  static let formerDevicePrefix = "former-device:"

  /// Keeps `device`, this database's id at target `targetID`, over `sync
  /// off`: the blobs written under it stay this database's to remove.
  ///
  /// - Throws: `TaskerError.database`.
  public func keepFormerDevice(_ device: String, targetID: String) throws {
    try setValue(Self.formerDevicePrefix + device, targetID)
    memo.formerDevices = nil
  }

  /// The ids this database synced under at target `targetID` before a
  /// `sync off`: only blobs written under one of them (or the current id)
  /// are ever removed by this database.
  ///
  /// - Throws: `TaskerError.damagedDatabase` for a name or value that is
  ///   not 32 hex digits, `.database`.
  public func formerDevices(targetID: String) throws -> Set<String> {
    if let known = memo.formerDevices, known.targetID == targetID { return known.devices }
    var devices = Set<String>()
    for row in try namedValues(prefix: Self.formerDevicePrefix) {
      guard Hex.decode(row.key)?.count == 16, Hex.decode(row.value)?.count == 16 else {
        throw TaskerError.damagedDatabase(path: "sync_values", reason: "\(row.name) is not a device and a target")
      }
      if row.value == targetID { devices.insert(row.key) }
    }
    memo.formerDevices = (targetID, devices)
    return devices
  }

  /// Takes back, after `sync setup` (and its `forgetTarget`) with target
  /// `targetID`, the blobs kept there over `sync off`: noted again with
  /// their writer, at a position no device acknowledges, which the first
  /// sync moves to the object that sends their deletions again (every
  /// record goes out after setup). Those kept at other targets stay kept.
  ///
  /// - Throws: `TaskerError.damagedDatabase` for a kept value that is not
  ///   `<32 hex>:<32 hex>`, `.database`.
  public func adoptKeptBlobs(targetID: String, device: String) throws {
    for row in try namedValues(prefix: Self.keptBlobPrefix) {
      let parts = row.value.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
      let blob = row.key
      guard parts.count == 2, Hex.decode(blob)?.count == 16, Hex.decode(parts[0])?.count == 16,
        Hex.decode(parts[1])?.count == 16
      else {
        throw TaskerError.damagedDatabase(path: "sync_values", reason: "\(row.name) is not a target and a device")
      }
      guard parts[0] == targetID else { continue }
      let noted = DeletedBlob(blob: blob, device: device, seq: UInt64.max, writer: parts[1] == device ? nil : parts[1])
      try setValue(Self.deletedBlobPrefix + blob, noted.value)
      try store.connection.prepare("DELETE FROM sync_values WHERE name = ?").run([.text(row.name)])
    }
  }

  // MARK: - Attachments waiting for their owner

  /// Notes that attachment `uid` waits for `owner` (`task/<uid>`) to be shown.
  ///
  /// - Throws: `TaskerError.database`.
  public func wait(attachment uid: String, for owner: String) throws {
    try store.connection.prepare("INSERT OR REPLACE INTO sync_waiting (uid, owner) VALUES (?, ?)")
      .run([.text(uid), .text(owner)])
  }

  /// The attachments waiting for `owner`.
  ///
  /// - Throws: `TaskerError.database`.
  public func waiting(for owner: String) throws -> [String] {
    try store.connection.prepare("SELECT uid FROM sync_waiting WHERE owner = ? ORDER BY uid")
      .rows([.text(owner)]) { $0.text(0) }
  }

  /// Stops waiting for attachment `uid`.
  ///
  /// - Throws: `TaskerError.database`.
  public func stopWaiting(attachment uid: String) throws {
    try store.connection.prepare("DELETE FROM sync_waiting WHERE uid = ?").run([.text(uid)])
  }
}
