import TaskSystem
import TaskerCore
import TaskerHTTP

/// What the storage or a record held that a reader refused, by the
/// outcome names of docs/formats/sync-storage.md.
public enum SyncOutcome: String, Error, Sendable, Equatable, CaseIterable {
  /// The marker is not 54 bytes or has another magic.
  case malformedMarker = "malformed_marker"
  /// A version this build does not read.
  case unsupportedVersion = "unsupported_version"
  /// An epoch the device's sync key does not have.
  case unknownEpoch = "unknown_epoch"
  /// The marker's tag does not verify under this sync key.
  case notThisKey = "not_this_key"
  /// An object above 4 MiB of plaintext.
  case tooLarge = "too_large"
  /// An object shorter than the smallest one.
  case truncated
  /// An object with another magic.
  case malformedObject = "malformed_object"
  /// The header's device or seq is not the name's, or seq 0.
  case wrongPosition = "wrong_position"
  /// The tag does not verify: forged, altered, or from another target.
  case authenticationFailed = "authentication_failed"
  /// The padding breaks the rules.
  case badPadding = "bad_padding"
  /// The payload breaks a rule of the format.
  case malformedPayload = "malformed_payload"
  /// A body text does not open under the note keys with its context.
  case bodyUnreadable = "body_unreadable"
  /// An epoch change from an epoch this device has already seen another change from.
  case epochConflict = "epoch_conflict"
  /// The sync keyring item breaks its rules (length, epochs).
  case malformedSyncKey = "malformed_sync_key"
  /// A configuration record breaks the format.
  case malformed
  /// A configuration record names another database.
  case wrongDatabase = "wrong_database"
  /// A blob without the attachment magic or of another version.
  case malformedBlob = "malformed_blob"
  /// An attachment's blob is not (or not yet) at the storage.
  case blobMissing = "blob_missing"
}

/// Every way `tasker sync` can fail. No case carries note text, a body, a
/// key or a credential: paths, device ids, positions and outcome names.
public enum SyncError: Error, Equatable, Sendable {
  /// Sync is not set up for the database at `database`.
  case notSetUp(database: String)
  /// Sync is set up already, with `target`.
  case alreadySetUp(target: String)
  /// The folder given to `sync setup` does not exist or is not a directory.
  case targetMissing(path: String)
  /// A folder of the storage is a symlink or not a directory: refused.
  case targetUnsafe(path: String, reason: String)
  /// The storage's marker was refused.
  case markerRefused(path: String, outcome: SyncOutcome)
  /// The storage's marker names another target than the one set up.
  case targetChanged(path: String)
  /// The storage already holds this device's object `seq` with other bytes.
  case positionTaken(device: String, seq: UInt64)
  /// The vault has no sync key (`tasker.sync-key`).
  case syncKeyMissing
  /// The sync key item or the configuration record was refused.
  case recordRefused(item: String, outcome: SyncOutcome)
  /// A read or write at the storage failed.
  case storage(SystemError)
  /// The local store failed.
  case store(TaskerError)
  /// A payload was too large to write (one record over 4 MiB).
  case recordTooLarge(kind: String, id: String)
  /// An invalid argument (a device name).
  case invalidArgument(reason: String)
  /// No conflict on this record, or no such text number.
  case noConflict(record: String)
  /// A `remove-device` of these devices began and did not finish.
  case removalInterrupted(devices: [String])
  /// A device that stays has not yet written an object with its box key.
  case deviceKeyUnknown(device: String, name: String?)
  /// This device did not receive the key of `epoch` (it was removed, or
  /// unknown to the device that removed another).
  case outsideEpoch(epoch: UInt32)
  /// The WebDAV server could not be reached, or the exchange failed
  /// (timeout, TLS not verified, a redirect, plain HTTP off loopback).
  case network(HTTPClientError)
  /// The WebDAV server refused the credential (401 or 403).
  case credentialRejected(url: String, status: Int)
  /// The WebDAV server is out of space (507 Insufficient Storage).
  case storageFull(url: String)
  /// The WebDAV server answered a status the exchange does not allow.
  case serverFailed(url: String, status: Int)
  /// Attachment `attachment`'s blob at `path` was refused (or is missing):
  /// nothing of it was kept.
  case blobRefused(attachment: Int64, path: String, outcome: SyncOutcome)
  /// The attachment's content is here already, or it has no synced record.
  case notFetchable(attachment: Int64, reason: String)
  /// Attachment `attachment` is to be sent but its content is not on this
  /// device (never fetched, as a row an undo brought back) or its file
  /// cannot be read: nothing was sent.
  case attachmentUnsendable(attachment: Int64, reason: String)
}

extension SyncError: CustomStringConvertible {
  /// One line saying what went wrong.
  public var description: String {
    switch self {
    case .notSetUp(let database): return "sync is not set up for \(database)"
    case .alreadySetUp(let target): return "sync is set up already, with \(target)"
    case .targetMissing(let path): return "no folder at \(path)"
    case .targetUnsafe(let path, let reason): return "refused the storage folder \(path): \(reason)"
    case .markerRefused(let path, let outcome): return "refused the storage's marker \(path): \(outcome.rawValue)"
    case .targetChanged(let path):
      return "the storage's marker \(path) names another target than the one this device set up"
    case .positionTaken(let device, let seq):
      return "the storage already holds object \(seq) of this device (\(device)) with other bytes"
    case .syncKeyMissing: return "the vault has no sync key"
    case .recordRefused(let item, let outcome): return "refused the vault item \(item): \(outcome.rawValue)"
    case .storage(let error): return "the storage failed: \(error)"
    case .store(let error): return "\(error)"
    case .recordTooLarge(let kind, let id): return "the \(kind) \(id) is too large to sync (over 4 MiB sealed)"
    case .invalidArgument(let reason): return reason
    case .noConflict(let record): return "no conflict to resolve on \(record)"
    case .removalInterrupted(let devices):
      return "a removal of \(devices.joined(separator: ", ")) was interrupted; nothing is sent until it is finished"
    case .deviceKeyUnknown(let device, let name):
      return "device \(name.map { "\($0) (\(device))" } ?? device) has not sent its box key yet, so it could not "
        + "receive the new sync key"
    case .outsideEpoch(let epoch):
      return "this device did not receive the sync key of epoch \(epoch): it was removed, or was not known when "
        + "another device was removed"
    case .network(let error): return "the sync storage could not be reached: \(error)"
    case .credentialRejected(let url, let status):
      return "the sync storage refused the credential (HTTP \(status)) at \(url)"
    case .storageFull(let url): return "the sync storage is full (HTTP 507) at \(url)"
    case .serverFailed(let url, let status): return "the sync storage answered HTTP \(status) at \(url)"
    case .blobRefused(let attachment, let path, let outcome):
      return "refused the content of attachment \(attachment) at \(path): \(outcome.rawValue); nothing was kept"
    case .notFetchable(let attachment, let reason): return "attachment \(attachment) cannot be fetched: \(reason)"
    case .attachmentUnsendable(let attachment, let reason):
      return "attachment \(attachment) cannot be sent: \(reason); nothing was sent"
    }
  }

  /// What to do next.
  public var hint: String? {
    switch self {
    case .notSetUp: return "run 'tasker sync setup DIR' first"
    case .alreadySetUp: return "run 'tasker sync off' first to set up another target"
    case .targetMissing: return "make the folder (or mount the storage) and run the command again"
    case .targetUnsafe: return "replace the symlink by the folder itself; Tasker does not follow links at the storage"
    case .markerRefused(_, .notThisKey):
      return "this storage was set up under another sync key: bring this vault's keys from that device "
        + "('taskkey pair' or 'taskkey init --from-bundle'), or choose another folder"
    case .markerRefused, .targetChanged:
      return
        "the storage was altered; nothing was read or written. Check the folder, or 'tasker sync off' and set up again"
    case .positionTaken:
      return "this device's sync state is older than the storage's (a restored backup?): run 'tasker sync off' "
        + "and 'tasker sync setup' again to join as a new device"
    case .syncKeyMissing:
      return "bring the keys from the device that set up this storage: 'taskkey pair' (or 'taskkey sync export' "
        + "there and 'taskkey sync import', or 'taskkey init --from-bundle' here), then run setup again"
    case .recordRefused: return "run 'tasker sync off' and set up again"
    case .storage: return "check that the storage is mounted and writable; the local database is unchanged"
    case .store(let error): return error.hint
    case .recordTooLarge: return "shorten the note or page"
    case .invalidArgument: return nil
    case .noConflict: return "run 'tasker conflicts' to see what is in conflict"
    case .removalInterrupted(let devices):
      return "run 'tasker sync remove-device \(devices.joined(separator: " "))' again"
    case .deviceKeyUnknown:
      return "run 'tasker sync' on that device first (or remove it as well), then run remove-device again"
    case .outsideEpoch:
      return "bring the keys from a device that has them ('taskkey pair' or 'taskkey sync export'/'import'), "
        + "then run 'tasker sync' again"
    case .network:
      return "check the address and the connection; the local database is unchanged, the next sync carries on"
    case .credentialRejected:
      return "make a new app password on the server and run 'tasker sync off' and 'tasker sync setup' again"
    case .storageFull: return "free space on the server; the local database is unchanged, the next sync carries on"
    case .serverFailed(_, 413):
      return "the server refuses a body this large (HTTP 413): raise its upload limit (Apache: LimitRequestBody); "
        + "the local database is unchanged"
    case .serverFailed: return "try again later; the local database is unchanged, the next sync carries on"
    case .blobRefused(_, _, .blobMissing):
      return "the device that added it has not uploaded it yet: run 'tasker sync' there, then try again"
    case .blobRefused:
      return "the storage holds altered content; ask the device that added it to attach the file again"
    case .notFetchable: return nil
    case .attachmentUnsendable(let attachment, _):
      return "put its file back, or remove it ('tasker attach remove \(attachment)') and attach the file again, then "
        + "sync again; the local database is unchanged"
    }
  }
}
