import CommandKit
import ExitCodeMap
import TaskerCore
import TaskerGate

// The app's errors on the project's one exit-code table (CommandKit's
// `ExitCode`): each switch names every case, and a wrapped library error
// keeps the code ExitCodeMap gives it in `taskkey` too.

extension TaskerError: CommandFailure {
  /// The code of the cause.
  public var exitCode: ExitCode {
    switch self {
    case .databaseNotFound: return .noInput
    case .notADatabase, .database, .damagedDatabase: return .databaseError
    case .databaseTooNew: return .databaseTooNew
    case .databaseBusy: return .databaseBusy
    case .notFound: return .notFound
    case .invalidValue, .attachmentRefused, .receiptInvalid, .approvalInvalid, .rangeNotSatisfiable: return .dataError
    case .receiptNotFound: return .notFound
    case .notUndoable, .alreadyUndone: return .gateRefused
    case .vaultLocked: return .vaultLocked
    case .vaultNotFound, .noVaultLocation: return .vaultNotFound
    case .vault(let inner): return inner.exitCode
    case .sealedBodyUnreadable(_, let cause), .sealingFailed(_, let cause): return cause.exitCode
    case .attachment(_, let cause): return cause.exitCode
    case .system(let error): return error.exitCode
    case .fileAccess: return .ioError
    case .protectionSettingsUnreadable: return .tampered
    case .noteKeyChanged: return .keyChanged
    case .outputExists: return .cannotCreate
    }
  }

  /// The error's description.
  public var message: String { description }
}

extension GateError: CommandFailure {
  /// The code of the cause; a refused key exits as `taskkey verify` would.
  public var exitCode: ExitCode {
    switch self {
    case .invalidQuietHours, .posixTimeZoneRule, .unknownTimeZone, .invalidBudget: return .dataError
    case .invalidListenAddress, .invalidAllowedHost: return .usage
    case .httpStartFailed, .httpLibraryUnavailable: return .unavailable
    case .keyRefused(let refusal): return refusal.exitCode
    case .keySourcesConflict: return .usage
    case .keyFileRefused: return .permission
    case .keyFileMissing: return .noInput
    case .approvalNotFound, .receiptNotFound: return .notFound
    case .approvalNotPending, .approvalUnreadable, .keyNoLongerValid, .notUndoable, .alreadyUndone: return .gateRefused
    case .store(let inner): return inner.exitCode
    case .receiptMalformed: return .dataError
    case .receiptUnsupportedVersion: return .unsupportedVersion
    }
  }

  /// None.
  public var hint: String? {
    if case .store(let inner) = self { return inner.hint }
    return nil
  }
}
