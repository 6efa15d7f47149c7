import TaskAttachments
import TaskCrypto
import TaskSystem
import TaskVault

/// Every way a Tasker operation can fail.
///
/// Each case names one cause and carries no note text, page body or key
/// bytes: record ids, paths and key ids only. `description` says what went
/// wrong in one line; `hint` says what to do.
public enum TaskerError: Error, Equatable, Sendable {
  /// No database at `path` and the command does not create one.
  case databaseNotFound(path: String)
  /// The file at `path` is not an SQLite database.
  case notADatabase(path: String)
  /// The database was written by a newer Tasker (schema `version`, this
  /// build knows up to `supported`); it was not touched.
  case databaseTooNew(path: String, version: Int, supported: Int)
  /// The database holds a value no Tasker writes where the store checks
  /// it before use (a negative schema version); `reason` says which. It
  /// was not touched.
  case damagedDatabase(path: String, reason: String)
  /// Another process held the database lock for longer than the busy timeout.
  case databaseBusy(path: String)
  /// SQLite reported an error: its extended result `code` and message.
  case database(path: String, code: Int32, message: String)
  /// No task, page or attachment with this id.
  case notFound(kind: RecordKind, id: Int64)
  /// A field's value was refused; `reason` says why.
  case invalidValue(field: String, reason: String)
  /// The vault is locked, so no body can be sealed or opened. Nothing was written.
  case vaultLocked(reason: LockReason)
  /// No vault at `path`; bodies cannot be sealed or opened without one.
  case vaultNotFound(path: String)
  /// Neither `TASKKEY_HOME` nor `HOME` is set, so the vault cannot be found.
  case noVaultLocation
  /// Another vault failure while reading the note keys.
  case vault(TaskVaultError)
  /// A sealed body did not open: `record` names it (for example
  /// `task/7/notes`), `cause` says why (unknown key id, authentication
  /// failure, unsupported version, malformed). It is never shown as text.
  case sealedBodyUnreadable(record: String, cause: TaskCryptoError)
  /// Sealing a body failed (too large, or the random source failed).
  case sealingFailed(record: String, cause: TaskCryptoError)
  /// An attachment file did not seal or open: `record` names the record
  /// it is sealed for (`attachment/<id>/task/<task id>`), `cause` says why
  /// (unknown key, altered, moved, truncated, I/O). Nothing of a failed
  /// chunk is released.
  case attachment(record: String, cause: AttachmentError)
  /// An attachment row was refused before its file was read, written or
  /// removed: its `file` column is not a name Tasker makes, it has no
  /// single owner, or its file is sealed while the row records it plain
  /// (or the reverse). `record` is `attachment/<id>`.
  case attachmentRefused(record: String, reason: String)
  /// An attachment that came from another device through sync has its
  /// content still at the sync storage: it is fetched when first read
  /// with `tasker attach get`, not by other reads.
  case attachmentNotFetched(id: Int64)
  /// A system call on a file beside the database failed, or a file or
  /// folder was refused as not private (mode, owner, symlink).
  case system(SystemError)
  /// A file beside the database could not be read or written.
  case fileAccess(path: String, reason: String)
  /// The vault item that records this database's protection settings
  /// (`item`) was refused: `problem` says how (ProtectionSettings.swift).
  case protectionSettingsUnreadable(item: String, problem: ProtectionRecordProblem)
  /// The vault's primary note key changed (`taskkey rotate`) while
  /// `record` was being sealed under key `sealedWith`; the value was not
  /// stored (a key that rewrap has moved away from may be retired next).
  case noteKeyChanged(record: String, sealedWith: String, primary: String)
  /// A stored gate receipt breaks a rule of docs/formats/receipt.md (the
  /// database was edited); it is never shown as a receipt.
  case receiptInvalid(id: Int64, reason: String)
  /// The receipts were altered outside Tasker: verifying the chain and
  /// head (docs/formats/receipt.md, *Verifying*) gave `outcome`, at
  /// receipt `receipt` (nil for the head file), as `detail` says; the
  /// command that needed them (`tasker undo`) changed nothing.
  case receiptsTampered(outcome: ReceiptChainOutcome, receipt: Int64?, detail: String)
  /// The vault item that keys the receipt head (`item`) is not 32 bytes
  /// or not device-only: it was not made by Tasker.
  case receiptHeadKeyUnusable(item: String)
  /// A byte range asked of `record` (`attachment/<id>`) does not lie inside
  /// its `byteCount` bytes: it starts at or after the end, or ends after
  /// the last byte. Nothing was written.
  case rangeNotSatisfiable(record: String, range: AttachmentRange, byteCount: UInt64)
  /// A stored approval holds a word no Tasker writes (a tool, reason,
  /// status or key id; the database was edited); it is never shown.
  case approvalInvalid(id: Int64, reason: String)
  /// No receipt with this number.
  case receiptNotFound(id: Int64)
  /// The receipt records something that cannot be undone: `reason` says
  /// why (no undo, or the copy an undo needs was purged).
  case notUndoable(receipt: Int64, reason: String)
  /// The receipt was already undone, by receipt `by`.
  case alreadyUndone(receipt: Int64, by: Int64)
  /// Queueing a call would pass a per-key cap on waiting approvals:
  /// `cap` is `pending-approvals` (`limit` calls) or
  /// `pending-argument-bytes` (`limit` bytes as stored); nothing was queued.
  case approvalQueueFull(cap: String, limit: Int)
  /// `attach get --out PATH`: something exists at `path` already; nothing
  /// was written or replaced.
  case outputExists(path: String)
}

/// The kinds of record the store holds.
public enum RecordKind: String, Sendable, Equatable {
  /// A task.
  case task
  /// A page.
  case page
  /// An attachment file.
  case attachment
}

extension TaskerError: CustomStringConvertible {
  /// One line saying what went wrong.
  public var description: String {
    switch self {
    case .databaseNotFound(let path): return "no Tasker database at '\(path)'"
    case .notADatabase(let path): return "'\(path)' is not a Tasker database"
    case .databaseTooNew(let path, let version, let supported):
      return "'\(path)' has schema version \(version); this build reads up to \(supported)"
    case .damagedDatabase(let path, let reason): return "'\(path)' is damaged: \(reason)"
    case .databaseBusy(let path): return "'\(path)' is locked by another Tasker process"
    case .database(let path, let code, let message): return "database error \(code) on '\(path)': \(message)"
    case .notFound(let kind, let id): return "no \(kind.rawValue) with id \(id)"
    case .invalidValue(let field, let reason): return "invalid \(field): \(reason)"
    case .vaultLocked(let reason):
      return "the TaskKey vault is locked (\(reason.rawValue)): no note can be sealed or opened; nothing was changed"
    case .vaultNotFound(let path): return "no TaskKey vault at '\(path)'"
    case .noVaultLocation: return "cannot find the TaskKey vault: neither TASKKEY_HOME nor HOME is set"
    case .vault(let error): return "TaskKey vault: \(error.description)"
    case .sealedBodyUnreadable(let record, let cause):
      return "\(record) is sealed and cannot be opened on this device: \(cause.description)"
    case .sealingFailed(let record, let cause): return "cannot seal \(record): \(cause.description)"
    case .attachment(let record, let cause): return "\(record): \(cause.description)"
    case .attachmentRefused(let record, let reason): return "\(record) is refused: \(reason)"
    case .attachmentNotFetched(let id): return "attachment \(id)'s content is still at the sync storage"
    case .system(let error): return error.description
    case .fileAccess(let path, let reason): return "cannot use '\(path)': \(reason)"
    case .protectionSettingsUnreadable(let item, let problem):
      return "the protection settings recorded in the TaskKey vault (item '\(item)') were refused: \(problem.rawValue)"
    case .noteKeyChanged(let record, let old, let primary):
      return "the vault's primary note key changed from \(old) to \(primary) while \(record) was sealed; "
        + "nothing was stored"
    case .receiptInvalid(let id, let reason): return "receipt r\(id) in the database is not valid: \(reason)"
    case .receiptsTampered(let outcome, let receipt, let detail):
      let at = receipt.map { " at r\($0)" } ?? " at receipts.head"
      return "the receipts were altered outside Tasker (\(outcome.rawValue)\(at)): \(detail); nothing was changed"
    case .receiptHeadKeyUnusable(let item):
      return "the vault item \(item) is not a 32-byte device-only key, so the receipt head cannot be checked"
    case .rangeNotSatisfiable(let record, let range, let byteCount):
      return "bytes \(range) are not inside \(record), which holds \(byteCount) bytes"
    case .approvalInvalid(let id, let reason): return "approval #\(id) in the database is not valid: \(reason)"
    case .receiptNotFound(let id): return "no receipt r\(id)"
    case .notUndoable(let id, let reason): return "receipt r\(id) cannot be undone: \(reason)"
    case .alreadyUndone(let id, let by): return "receipt r\(id) was already undone by r\(by)"
    case .approvalQueueFull(let cap, let limit):
      let what = cap == TaskStore.pendingApprovalsCapName ? "\(limit) waiting approvals" : "2 MiB of waiting arguments"
      return "refused: this key's approval queue is full (\(what)); the user must approve or deny first"
    case .outputExists(let path): return "'\(path)' already exists; refusing to overwrite it"
    }
  }

  /// What to do next, when there is something useful to say.
  public var hint: String? {
    switch self {
    case .databaseNotFound: return "add a task with 'tasker add TITLE' to create it, or set TASKER_HOME"
    case .databaseTooNew: return "upgrade Tasker"
    case .damagedDatabase: return "restore tasker.db from a backup; nothing was changed"
    case .databaseBusy: return "wait for the other Tasker command to finish and try again"
    case .vaultLocked: return "run 'taskkey unlock'"
    case .vaultNotFound: return "run 'taskkey init' (or import this device's keys), or set TASKKEY_HOME"
    case .noVaultLocation: return "set TASKKEY_HOME to the vault directory"
    case .vault(let error): return error.hint
    case .system(.notOwner(let path)):
      return "Tasker uses only files you own: run as the user who owns '\(path)', or take it: chown $(id -u) '\(path)'"
    case .system(let error): return error.hint
    case .sealedBodyUnreadable(_, let cause):
      if case .unknownKeyID = cause {
        return "this device lacks the key: import a sync bundle with 'taskkey sync import'"
      }
      return "the stored value was altered or moved; restore the database from a backup"
    case .attachment(_, .crypto(.unknownKeyID)):
      return "this device lacks the key: import a sync bundle with 'taskkey sync import'"
    case .attachmentRefused:
      return "the database row was altered; restore tasker.db from a backup or delete the attachment's row"
    case .notFound: return "run 'tasker list' (or 'tasker page list') to see the ids"
    case .attachmentNotFetched(let id):
      return "fetch it with 'tasker attach get \(id) --out FILE' while the sync storage is reachable"
    case .protectionSettingsUnreadable:
      return "record them again with 'tasker settings set encryption on|off' (the other setting is then on)"
    case .noteKeyChanged: return "run the command again: it seals under the new primary key"
    case .receiptInvalid: return "the receipts table was altered; restore the database from a backup"
    case .receiptsTampered:
      return "'tasker receipts --verify' says where; restore the database from a backup"
    case .receiptHeadKeyUnusable:
      return "it was replaced outside Tasker: remove that item and receipts.head to start a new head"
    case .rangeNotSatisfiable(_, _, let byteCount):
      return byteCount == 0 ? "the attachment is empty" : "ask for a range inside 0-\(byteCount - 1)"
    case .approvalInvalid: return "the approval queue was altered; restore the database from a backup"
    case .receiptNotFound: return "'tasker receipts' lists them"
    case .outputExists: return "choose another path, or remove the file yourself first"
    default: return nil
    }
  }
}
