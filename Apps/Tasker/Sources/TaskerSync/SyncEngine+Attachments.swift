import TaskSystem
import TaskerCore

extension SyncEngine {
  /// Uploads the blobs of attachments added here, before the objects that
  /// carry their records: each is sealed from the local file on a worker
  /// thread while the storage takes what was sealed before
  /// (`SyncBlobSource`: no staging copy, and never a blob whose seal
  /// failed), then forgotten once there. A blob whose attachment is gone
  /// (removed before it left) is forgotten: its record says it is deleted.
  ///
  /// - Returns: how many were uploaded.
  /// - Throws: `SyncError.attachmentUnsendable` when the local content
  ///   cannot be read or is not its recorded length; `.storage`, the
  ///   target's errors, store and key errors (the blob stays pending).
  func uploadBlobs(progress: ((SyncProgress) -> Void)? = nil) throws -> Int {
    let pending = try store.withSyncTransaction { try $0.blobs() }
    guard !pending.isEmpty else { return 0 }
    var sent = 0
    for (index, item) in pending.enumerated() {
      let kept = try store.withSyncTransaction {
        try $0.state(kind: SyncRecord.Kind.attachment.rawValue, uid: item.uid)
      }
      guard let kept, kept.localID == item.localID, let record = try? SyncRecord.stored(kept.state),
        record.deleted == nil, let content = record.content,
        content.blob == item.blob, content.device == configuration.device
      else {
        try store.withSyncTransaction { try $0.removeBlob(item.blob) }
        continue
      }
      let read = try SyncError.storing {
        try SyncError.sendingContent(of: item.localID) { try store.attachmentContent(id: item.localID) }
      }
      let (keyring, targetID, id) = (keys.keyring, targetID, item.localID)
      guard let byteCount = try? content.blobByteCount else {
        throw SyncError.attachmentUnsendable(attachment: id, reason: "it is larger than a blob can hold")
      }
      let meter = progress.map {
        SyncTransferMeter("sending attachment \(index + 1) of \(pending.count)", total: byteCount, progress: $0)
      }
      let source = SyncBlobSource(byteCount: byteCount, attachment: id, given: meter?.advance) { push in
        try SyncBlobs.seal(
          { try SyncError.sendingContent(of: id, read) }, content: content, uid: item.uid, keyring: keyring,
          targetID: targetID, attachment: id, into: push)
      }
      // However the upload ends, the seal stops and its thread is done before the next blob.
      defer { source.finish() }
      do {
        _ = try target.createBlob(
          device: configuration.device, blob: item.blob, byteCount: source.byteCount, read: source.read)
      } catch {
        // The seal's own error, not the transport's account of why it stopped reading.
        throw source.failure ?? error
      }
      try store.withSyncTransaction { try $0.removeBlob(item.blob) }
      sent += 1
    }
    return sent
  }

  /// Fetches the content of attachment `id` (a row that came from another
  /// device), holding the home's sync lock, after checking the marker:
  /// its blob streams in on a worker thread (`SyncBlobPipe`) while this
  /// one checks it by the reading rules of the blob (`SyncBlobReader`)
  /// and writes the content to a temporary, kept as the local attachment
  /// setting says only once the whole blob passed; `progress` hears how
  /// far the download has come.
  ///
  /// - Throws: `SyncError.notFetchable` (its content is here, or it has
  ///   no synced record), `.blobRefused` naming the outcome (`blob_missing`
  ///   when it is not at the storage yet); the marker's, the storage's and
  ///   the store's errors. On any error nothing is kept.
  public func fetchAttachment(id: Int64, progress: ((SyncProgress) -> Void)? = nil) throws {
    let lock = PosixFileSystem.directory(of: store.databasePath) + "/tasker.sync.lock"
    try SyncError.storing {
      try FileLock.withExclusive(lock) {
        SyncFiles.clearStaging(forDatabase: store.databasePath)
        guard try store.attachment(id: id).remote else {
          throw SyncError.notFetchable(attachment: id, reason: "its content is here already")
        }
        let kept = try store.withSyncTransaction {
          try $0.state(kind: SyncRecord.Kind.attachment.rawValue, localID: id)
        }
        guard let kept, let record = try? SyncRecord.stored(kept.state),
          let content = record.content
        else { throw SyncError.notFetchable(attachment: id, reason: "it has no synced record") }
        try checkMarker()
        let name = target.location + "/a/\(content.device)/\(content.blob)"
        do {
          let limit = try content.blobByteCount
          let download = SyncHandedToWorker(target)
          let pipe = SyncBlobPipe { push in
            try download.value.readBlob(device: content.device, blob: content.blob, limit: limit, into: push)
          }
          // However the keeping ends, the download stops and its thread is done before the lock is let go.
          defer {
            pipe.cancel()
            pipe.finish()
          }
          let meter = progress.map { SyncTransferMeter("fetching attachment \(id)", total: limit, progress: $0) }
          let next = {
            let piece = try pipe.next()
            meter?.advance(by: piece?.count ?? 0)
            return piece
          }
          let reader = try SyncBlobReader(
            next, recycle: pipe.recycle, content: content, uid: record.id, keyring: keys.keyring,
            targetID: targetID)
          try store.keepFetchedAttachment(id: id, read: reader.read)
        } catch let outcome as SyncOutcome {
          throw SyncError.blobRefused(attachment: id, path: name, outcome: outcome)
        } catch SyncError.network(.responseTooLarge) {
          throw SyncError.blobRefused(attachment: id, path: name, outcome: .tooLarge)
        }
      }
    }
  }
}

extension SyncError {
  /// Runs `body`, which opens or reads the content of attachment `id` to
  /// send it, with the failures that mean the content is not here (never
  /// fetched, a file missing, altered or refused) given as
  /// `attachmentUnsendable`; the vault's and the database's errors pass.
  static func sendingContent<Result>(of id: Int64, _ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch TaskerError.attachmentNotFetched {
      throw SyncError.attachmentUnsendable(
        attachment: id, reason: "its content is not on this device (it was never fetched from the sync storage)")
    } catch let error as TaskerError {
      switch error {
      case .attachmentRefused, .fileAccess, .system, .attachment:
        throw SyncError.attachmentUnsendable(attachment: id, reason: "its file cannot be read: \(error)")
      default: throw error
      }
    } catch let error as SystemError {
      throw SyncError.attachmentUnsendable(attachment: id, reason: "its file cannot be read: \(error)")
    }
  }
}
