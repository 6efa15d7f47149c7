import AssistantKeys
import BackupRules
import TaskAttachments
import TaskCrypto
import TaskSystem
import TaskVault

/// The one place that turns an error into what `taskkey` prints and the
/// exit code it returns. Commands throw the lower modules' errors as they
/// are; every cause maps to the code whose meaning it has (README, "Exit
/// codes").
struct FailureReport {
  /// The exit code.
  let code: ExitCode
  /// The line after `taskkey: error: `; nil when the command reported
  /// already (doctor's findings).
  let message: String?
  /// The `hint:` line, if any.
  let hint: String?

  init(_ error: any Error) {
    switch error {
    case let quiet as QuietExit:
      (code, message, hint) = (quiet.code, nil, nil)
    case let error as CLIError:
      (code, message, hint) = (Self.code(error), error.message, error.hint)
    case let error as TaskCryptoError:
      (code, message, hint) = (Self.code(error), error.description, Self.hint(error))
    case let error as TaskVaultError:
      (code, message, hint) = (Self.code(error), error.description, error.hint)
    case AssistantKeyError.vault(let error):
      // The vault's own error keeps its message, hint and exit code.
      (code, message, hint) = (Self.code(error), error.description, error.hint)
    case let error as AssistantKeyError:
      (code, message, hint) = (Self.code(error), error.description, nil)
    case let error as BackupError:
      (code, message, hint) = (Self.code(error), error.description, error.hint)
    case let error as AttachmentError:
      (code, message, hint) = (Self.code(error), error.description, nil)
    case let error as SystemError:
      (code, message, hint) = (Self.code(error), error.description, error.hint)
    default:
      (code, message, hint) = (.software, String(describing: error), nil)
    }
  }

  static func code(_ error: CLIError) -> ExitCode {
    switch error {
    case .usage, .binaryToTerminal: return .usage
    case .cannotOpen: return .noInput
    case .fileExists: return .cannotCreate
    case .unsafePermissions, .notOwner, .notRegularFile: return .permission
    case .inputTooLarge, .malformedInput: return .dataError
    case .vectorsFailed: return .vectorsFailed
    case .valueRefused(_, let error): return code(error)
    case .keyStillInUse: return .keyInUse
    case .passphraseMismatch, .weakPassphrase: return .passphraseRefused
    case .noTerminal: return .noTerminal
    case .wrongBundlePassphrase: return .wrongPassphrase
    }
  }

  static func code(_ error: TaskCryptoError) -> ExitCode {
    switch error {
    case .authenticationFailed, .commitmentMismatch, .chunkAuthenticationFailed, .chunkOutOfPlace,
      .finalChunkAuthenticationFailed, .trailingData:
      return .authenticationFailed
    case .truncatedHeader, .missingFinalChunk, .truncatedChunk, .rangeOutOfBounds: return .dataError
    case .unknownKeyID: return .unknownKey
    case .unsupportedVersion: return .unsupportedVersion
    case .cannotRetirePrimary: return .keyInUse
    case .invalidBase64, .truncated, .tooLarge, .invalidUTF8, .invalidKeyID, .malformedKeyFile, .invalidKeySize,
      .duplicateKeyID, .invalidKDFParameters:
      return .dataError
    case .resourceUnavailable: return .osError
    case .backendFailure: return .software
    }
  }

  static func hint(_ error: TaskCryptoError) -> String? {
    switch error {
    case .authenticationFailed: return "check that --context matches the one used to seal, and that the key is right"
    case .unknownKeyID: return "the value was sealed with a key this keyring does not hold ('taskkey keys' lists them)"
    case .cannotRetirePrimary: return "promote another key first ('taskkey promote KID'), or rotate"
    default: return nil
    }
  }

  static func code(_ error: TaskVaultError) -> ExitCode {
    switch error {
    case .wrongPassphrase: return .wrongPassphrase
    case .locked: return .vaultLocked
    case .damaged, .tampered: return .tampered
    case .notInitialised: return .vaultNotFound
    case .unsupportedVersion: return .unsupportedVersion
    case .system(let system): return code(system)
    case .alreadyInitialised: return .cannotCreate
    case .itemNotFound: return .notFound
    case .emptyPassphrase, .passphraseTooLong: return .passphraseRefused
    case .invalidItemName, .invalidLabel, .itemTooLarge, .storeFull, .itemClassConflict, .keyConflict, .retiredKey:
      return .dataError
    case .unlockUnavailable: return .osError
    case .crypto(let crypto): return code(crypto)
    }
  }

  static func code(_ error: AssistantKeyError) -> ExitCode {
    switch error {
    case .malformedKey: return .malformedAssistantKey
    case .badChecksum: return .assistantKeyChecksum
    case .unknownKey, .unknownID, .noSuchAssistant: return .unknownAssistantKey
    case .revoked: return .revokedAssistantKey
    case .expired: return .expiredAssistantKey
    case .vaultLocked: return .vaultLocked
    case .registryDamaged: return .tampered
    case .invalidName, .invalidGrant, .tooManyGrants, .invalidDuration, .registryFull: return .dataError
    case .nameInUse: return .cannotCreate
    case .system(let system): return code(system)
    case .notPermanent: return .ioError
    case .idCollision: return .osError
    case .crypto(let crypto): return code(crypto)
    case .vault(let vault): return code(vault)
    }
  }

  static func code(_ error: SystemError) -> ExitCode {
    switch error {
    case _ where error.isRefusal: return .permission
    case _ where error.isNotFound: return .noInput
    case _ where error.isAlreadyExisting: return .cannotCreate
    case .tooLarge: return .dataError
    case .runtimeDirectoryUnavailable: return .osError
    default: return .ioError
    }
  }

  static func code(_ error: AttachmentError) -> ExitCode {
    switch error {
    case .crypto(let crypto): return code(crypto)
    case .truncatedWrapper, .notSealed, .malformedSettings: return .dataError
    case .unsupportedVersion: return .unsupportedVersion
    case .destinationExists: return .cannotCreate
    case .system(let system): return code(system)
    }
  }

  static func code(_ error: BackupError) -> ExitCode {
    switch error {
    case .damaged, .tampered: return .tampered
    case .unsupportedVersion: return .unsupportedVersion
    case .targetNotEmpty, .outputExists: return .cannotCreate
    case .system(let system): return code(system)
    case .vault(let vault): return code(vault)
    }
  }
}

/// Ends a command with `code` and no message: the command has reported
/// already (doctor's findings) or its exit code is the answer
/// (`status --check`).
struct QuietExit: Error {
  /// The exit code.
  let code: ExitCode
}
