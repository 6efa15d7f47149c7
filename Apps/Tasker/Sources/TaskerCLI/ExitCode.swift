import TaskCrypto
import TaskVault
import TaskerCore

/// The exit codes of `tasker`. Codes shared with `taskkey` keep its
/// numbers (10-16 for keys and the vault, 64 and up from `sysexits.h`);
/// 40-43 are Tasker's own.
public enum ExitCode: Int32, CaseIterable, Sendable {
  /// The command did what was asked.
  case success = 0
  /// A sealed body or attachment failed authentication: altered, truncated,
  /// or moved to another record.
  case authenticationFailed = 10
  /// A sealed body names a key this device's vault does not hold.
  case unknownKey = 11
  /// A sealed body names a format version this build cannot read.
  case unsupportedVersion = 12
  /// The TaskKey vault is locked; run `taskkey unlock`.
  case vaultLocked = 14
  /// The vault reported a damaged or altered file, or another vault failure.
  case vaultFailure = 15
  /// No TaskKey vault was found.
  case vaultNotFound = 16
  /// `keys --check KID`: the database still uses the key; run `tasker rewrap`.
  case keyInUse = 17
  /// The assistant key is malformed (as `taskkey`).
  case assistantKeyMalformed = 20
  /// The assistant key's checksum does not match (as `taskkey`).
  case assistantKeyChecksum = 21
  /// The assistant key is not in this device's registry (as `taskkey`).
  case assistantKeyUnknown = 22
  /// The assistant key was revoked (as `taskkey`).
  case assistantKeyRevoked = 23
  /// The assistant key expired (as `taskkey`).
  case assistantKeyExpired = 24
  /// The vault's primary note key changed while a value was sealed
  /// (`taskkey rotate` during the command); nothing was stored.
  case keyChanged = 25
  /// No task, page or attachment with the given id.
  case notFound = 40
  /// The database was written by a newer Tasker.
  case databaseTooNew = 41
  /// Another Tasker process holds the database.
  case databaseBusy = 42
  /// SQLite reported an error, or the file is not a Tasker database, or
  /// it is damaged (a schema version no Tasker writes).
  case databaseError = 43
  /// The gate refused: the approval was already decided, the receipt
  /// cannot be undone or was undone, or the key that asked is no longer valid.
  case gateRefused = 44
  /// The HTTP server could not listen on the address, or the editor of
  /// `--notes-in-editor` could not start or did not exit 0.
  case unavailable = 69
  /// The command line is wrong: unknown option, missing argument.
  case usage = 64
  /// A value was refused: empty title, bad date, body too large.
  case dataError = 65
  /// An input file or the database does not exist or cannot be opened.
  case noInput = 66
  /// An internal error.
  case software = 70
  /// The process could not be hardened (core dumps off, fatal signals
  /// ending it silently) at start-up, so it did nothing (as `taskkey`).
  case osError = 71
  /// Reading or writing a file failed.
  case ioError = 74
  /// A file or folder is not private to the user (mode, owner, symlink) and was refused.
  case permission = 77

  /// One line for the help text and README.
  public var summary: String {
    switch self {
    case .success: return "success"
    case .authenticationFailed: return "a sealed body failed authentication (altered or moved)"
    case .unknownKey: return "a sealed body needs a key this device does not have"
    case .unsupportedVersion: return "a sealed body has a format version this build cannot read"
    case .vaultLocked: return "the TaskKey vault is locked; run 'taskkey unlock'"
    case .vaultFailure: return "the TaskKey vault failed (damaged, altered, permissions)"
    case .vaultNotFound: return "no TaskKey vault; run 'taskkey init' or set TASKKEY_HOME"
    case .keyInUse: return "keys --check: the database still uses the key; run 'tasker rewrap'"
    case .keyChanged: return "the primary note key changed during the command; nothing stored, run it again"
    case .assistantKeyMalformed: return "assistant key malformed: not 'tk_' and 49 letters and digits"
    case .assistantKeyChecksum: return "assistant key checksum mismatch: mistyped or cut short"
    case .assistantKeyUnknown: return "unknown assistant key"
    case .assistantKeyRevoked: return "assistant key revoked"
    case .assistantKeyExpired: return "assistant key expired"
    case .notFound: return "no task, page or attachment with that id"
    case .databaseTooNew: return "the database was written by a newer Tasker"
    case .databaseBusy: return "another Tasker process holds the database"
    case .databaseError: return "SQLite error, or not a Tasker database, or a damaged one"
    case .gateRefused: return "the gate refused: approval decided, receipt not undoable, or key no longer valid"
    case .unavailable: return "the HTTP server could not listen, or the editor failed (nothing changed)"
    case .usage: return "usage error: unknown option, missing or extra argument"
    case .dataError: return "a value was refused (empty title, bad date, too large)"
    case .noInput: return "an input file or the database cannot be opened"
    case .software: return "internal error"
    case .osError: return "the process could not be hardened at start-up (as taskkey)"
    case .ioError: return "read or write failed"
    case .permission: return "a file or folder is not private to you and was refused"
    }
  }

  /// The exit code for a store error.
  static func of(_ error: TaskerError) -> ExitCode {
    switch error {
    case .databaseNotFound: return .noInput
    case .notADatabase, .database, .damagedDatabase: return .databaseError
    case .databaseTooNew: return .databaseTooNew
    case .databaseBusy: return .databaseBusy
    case .notFound: return .notFound
    case .invalidValue: return .dataError
    case .vaultLocked: return .vaultLocked
    case .vaultNotFound, .noVaultLocation: return .vaultNotFound
    case .vault(let inner):
      if case .locked = inner { return .vaultLocked }
      return .vaultFailure
    case .sealedBodyUnreadable(_, let cause), .sealingFailed(_, let cause): return of(cause)
    case .attachment(_, let cause):
      switch cause {
      case .crypto(let inner): return of(inner)
      case .truncatedWrapper: return .authenticationFailed
      case .unsupportedVersion: return .unsupportedVersion
      case .system(let error): return error.isRefusal ? .permission : .ioError
      case .destinationExists, .notSealed, .malformedSettings: return .ioError
      }
    case .system(let error): return error.isRefusal ? .permission : .ioError
    case .fileAccess: return .ioError
    case .attachmentRefused: return .dataError
    case .protectionSettingsUnreadable: return .vaultFailure
    case .noteKeyChanged: return .keyChanged
    case .receiptInvalid: return .dataError
    case .rangeNotSatisfiable: return .dataError
    }
  }

  static func of(_ error: TaskCryptoError) -> ExitCode {
    switch error {
    case .authenticationFailed: return .authenticationFailed
    case .unknownKeyID: return .unknownKey
    case .unsupportedVersion: return .unsupportedVersion
    case .tooLarge, .invalidBase64, .truncated, .invalidUTF8: return .dataError
    case .truncatedHeader, .commitmentMismatch, .missingFinalChunk, .truncatedChunk, .chunkAuthenticationFailed,
      .chunkOutOfPlace, .finalChunkAuthenticationFailed, .trailingData:
      return .authenticationFailed
    default: return .software
    }
  }
}
