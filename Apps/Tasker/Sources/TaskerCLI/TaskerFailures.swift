import CommandKit
import ExitCodeMap
import TaskerCore
import TaskerGate
import TaskerHTTP
import TaskerPlanning
import TaskerSync

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
    case .receiptHeadKeyUnusable, .receiptsTampered: return .tampered
    case .invalidValue, .attachmentRefused, .receiptInvalid, .approvalInvalid, .rangeNotSatisfiable: return .dataError
    case .receiptNotFound: return .notFound
    case .notUndoable, .alreadyUndone, .approvalQueueFull: return .gateRefused
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
    case .attachmentNotFetched: return .unavailable
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
    case .store(let inner), .approvedCallFailed(_, _, let inner): return inner.exitCode
    case .receiptMalformed: return .dataError
    case .receiptUnsupportedVersion: return .unsupportedVersion
    }
  }

  /// The store failure's hint, for a store failure; else none.
  public var hint: String? {
    switch self {
    case .store(let inner), .approvedCallFailed(_, _, let inner): return inner.hint
    default: return nil
    }
  }
}

extension PlanningError: CommandFailure {
  /// The code of the cause: 56 to 60 for what a provider did or was not
  /// allowed, 69 when it could not be reached.
  public var exitCode: ExitCode {
    switch self {
    case .invalidProviderName, .severalProviders, .publicProviderNeedsKey, .invalidModel, .invalidKeyItem:
      return .usage
    case .providerExists: return .cannotCreate
    case .providerNotFound, .noProvider, .keyItemMissing: return .notFound
    case .keyItemNotDeviceOnly, .keyValueUnusable, .recordMalformed, .invalidQuestion: return .dataError
    case .recordUnsupportedVersion: return .unsupportedVersion
    case .notConfirmed: return .providerNotConfirmed
    case .keyRejected: return .providerKeyRejected
    case .rateLimited: return .providerRateLimited
    case .providerFailed: return .providerFailed
    case .answerRefused: return .providerAnswerRefused
    case .exchange(let failure): return failure.exitCode
    }
  }

  /// The error's description, which ends with what to do next.
  public var message: String { description }

  /// None: the message says what to do.
  public var hint: String? { nil }
}

extension HTTPClientError: CommandFailure {
  /// A URL refused before any connection is the user's to fix (65); a
  /// response too large is a refused answer (60); every failure to reach
  /// the server or to finish the exchange is 69.
  public var exitCode: ExitCode {
    switch self {
    case .badURL, .plainHTTPRefused, .headerRefused: return .dataError
    case .responseTooLarge: return .providerAnswerRefused
    case .unreachable, .timedOut, .tlsFailed, .redirectRefused, .transport: return .unavailable
    }
  }

  /// The error's description.
  public var message: String { description }

  /// None: the message says what to do.
  public var hint: String? { nil }
}

extension SyncError: CommandFailure {
  /// The code of the cause: 61 for what the storage held and was refused,
  /// 62 when sync is not set up; a vault item of a version this build does
  /// not read 12, one otherwise refused 15.
  public var exitCode: ExitCode {
    switch self {
    case .notSetUp: return .syncNotSetUp
    case .alreadySetUp: return .cannotCreate
    case .targetMissing: return .noInput
    case .targetUnsafe: return .permission
    case .markerRefused, .targetChanged, .positionTaken: return .syncRefused
    case .syncKeyMissing, .noConflict: return .notFound
    case .removalInterrupted, .deviceKeyUnknown: return .unavailable
    case .outsideEpoch: return .notFound
    case .recordRefused(_, .unsupportedVersion): return .unsupportedVersion
    case .recordRefused: return .tampered
    case .storage(let error): return error.exitCode
    case .store(let error): return error.exitCode
    case .recordTooLarge: return .dataError
    case .invalidArgument: return .usage
    case .network(.responseTooLarge): return .syncRefused
    case .network(let error): return error.exitCode
    case .credentialRejected: return .syncCredentialRejected
    case .storageFull: return .syncStorageFull
    case .serverFailed: return .unavailable
    case .blobRefused(_, _, .blobMissing): return .unavailable
    case .blobRefused: return .syncRefused
    case .notFetchable, .attachmentUnsendable: return .dataError
    }
  }

  /// The error's description.
  public var message: String { description }
}
