import AssistantKeys
import BackupRules
import CommandKit
import TaskAttachments
import TaskCrypto
import TaskPairing
import TaskSystem
import TaskVault

// The one map from TaskKey's library errors to the project's exit codes
// (CommandKit's `ExitCode`), shared by `taskkey` and `tasker`, so an error
// ends both with the same number. Every switch names every case.

extension TaskCryptoError: CommandFailure {
  /// The code of the cause: authentication, unknown key, version, malformed
  /// input, resources, or a library failure.
  public var exitCode: ExitCode {
    switch self {
    case .authenticationFailed, .commitmentMismatch, .chunkAuthenticationFailed, .chunkOutOfPlace,
      .finalChunkAuthenticationFailed, .trailingData, .cpaceConfirmationFailed:
      return .authenticationFailed
    case .cpaceInvalidInput, .cpaceMessageLength, .cpaceInvalidPoint, .cpaceIdentityPoint, .cpaceReflectedMessage:
      return .dataError
    case .cpaceFinished: return .software
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

  /// The error's description (it holds no key or plaintext bytes).
  public var message: String { description }

  /// What to check next, for the causes a user can act on.
  public var hint: String? {
    switch self {
    case .authenticationFailed:
      return "check that the context matches the one used to seal, and that the key is right"
    case .unknownKeyID: return "the value was sealed with a key this keyring does not hold ('taskkey keys' lists them)"
    case .cannotRetirePrimary: return "promote another key first ('taskkey promote KID'), or rotate"
    case .commitmentMismatch, .chunkAuthenticationFailed, .chunkOutOfPlace, .finalChunkAuthenticationFailed,
      .trailingData, .truncatedHeader, .missingFinalChunk, .truncatedChunk, .rangeOutOfBounds, .unsupportedVersion,
      .invalidBase64, .truncated, .tooLarge, .invalidUTF8, .invalidKeyID, .malformedKeyFile, .invalidKeySize,
      .duplicateKeyID, .invalidKDFParameters, .resourceUnavailable, .backendFailure, .cpaceInvalidInput,
      .cpaceMessageLength, .cpaceInvalidPoint, .cpaceIdentityPoint, .cpaceReflectedMessage, .cpaceFinished:
      return nil
    case .cpaceConfirmationFailed: return "check that both devices show the same code, then pair again"
    }
  }
}

extension TaskVaultError: CommandFailure {
  /// The code of the cause.
  public var exitCode: ExitCode {
    switch self {
    case .wrongPassphrase: return .wrongPassphrase
    case .locked: return .vaultLocked
    case .damaged, .tampered: return .tampered
    case .notInitialised: return .vaultNotFound
    case .unsupportedVersion: return .unsupportedVersion
    case .system(let system): return system.exitCode
    case .alreadyInitialised: return .cannotCreate
    case .itemNotFound: return .notFound
    case .emptyPassphrase, .passphraseTooLong: return .passphraseRefused
    case .invalidItemName, .invalidLabel, .itemTooLarge, .storeFull, .itemClassConflict, .keyConflict, .retiredKey:
      return .dataError
    case .unlockUnavailable: return .osError
    case .crypto(let crypto): return crypto.exitCode
    }
  }

  /// The error's description.
  public var message: String { description }
}

extension AssistantKeyError: CommandFailure {
  /// The code of the cause; a wrapped vault error keeps the vault's code.
  public var exitCode: ExitCode {
    switch self {
    case .malformedKey: return .malformedAssistantKey
    case .badChecksum: return .assistantKeyChecksum
    case .unknownKey, .unknownID, .noSuchAssistant: return .unknownAssistantKey
    case .revoked: return .revokedAssistantKey
    case .expired: return .expiredAssistantKey
    case .vaultLocked: return .vaultLocked
    case .registryDamaged: return .tampered
    case .invalidName, .invalidGrant, .tooManyGrants, .invalidDuration, .registryFull: return .dataError
    case .nameInUse: return .cannotCreate
    case .system(let system): return system.exitCode
    case .notPermanent: return .ioError
    case .idCollision: return .osError
    case .crypto(let crypto): return crypto.exitCode
    case .vault(let vault): return vault.exitCode
    }
  }

  /// The error's description; a wrapped vault error's own.
  public var message: String {
    if case .vault(let vault) = self { return vault.description }
    return description
  }

  /// A wrapped vault error's hint; none otherwise.
  public var hint: String? {
    if case .vault(let vault) = self { return vault.hint }
    return nil
  }
}

extension SystemError: CommandFailure {
  /// Refusals are permissions (77), a missing file no input (66), an
  /// existing one cannot-create (73), a bad address usage (64), a network
  /// deadline unavailable (69); the rest (a peer that closed early too)
  /// are I/O (74).
  public var exitCode: ExitCode {
    if isRefusal { return .permission }
    if isNotFound { return .noInput }
    if isAlreadyExisting { return .cannotCreate }
    if case .tooLarge = self { return .dataError }
    if case .runtimeDirectoryUnavailable = self { return .osError }
    if case .invalidAddress = self { return .usage }
    if case .timedOut = self { return .unavailable }
    return .ioError
  }

  /// The error's description (path and call, no data).
  public var message: String { description }
}

extension AttachmentError: CommandFailure {
  /// The code of the cause.
  public var exitCode: ExitCode {
    switch self {
    case .crypto(let crypto): return crypto.exitCode
    case .truncatedWrapper, .notSealed, .malformedSettings: return .dataError
    case .unsupportedVersion: return .unsupportedVersion
    case .destinationExists: return .cannotCreate
    case .system(let system): return system.exitCode
    }
  }

  /// The error's description.
  public var message: String { description }

  /// None.
  public var hint: String? { nil }
}

extension BackupError: CommandFailure {
  /// The code of the cause.
  public var exitCode: ExitCode {
    switch self {
    case .damaged, .tampered: return .tampered
    case .unsupportedVersion: return .unsupportedVersion
    case .targetNotEmpty, .outputExists: return .cannotCreate
    case .system(let system): return system.exitCode
    case .vault(let vault): return vault.exitCode
    }
  }

  /// The error's description.
  public var message: String { description }
}

extension PairingError: CommandFailure {
  /// A failed confirmation, a broken or aborted exchange and a tampered
  /// channel are pairing failures (26); a code that does not read is a
  /// data error (65), a version the peer speaks that this build does not
  /// is 12; the network and crypto keep their own codes.
  public var exitCode: ExitCode {
    switch self {
    case .confirmationFailed, .peerAborted, .protocolViolation, .channelTampered: return .pairingFailed
    case .codeNotRead, .storeRefused: return .dataError
    case .unsupportedVersion: return .unsupportedVersion
    case .network(let error): return error.exitCode
    case .crypto(let error): return error.exitCode
    }
  }

  /// The error's description.
  public var message: String { description }

  /// What to do next: a new offer after a failed one; a retyped code.
  public var hint: String? {
    switch self {
    case .confirmationFailed, .peerAborted(.confirmationFailed):
      return "check the four words with the person at the other device, then run 'taskkey pair offer' again"
    case .codeNotRead: return "type the four words the offering device shows, separated by spaces"
    case .network(.timedOut):
      return "run 'taskkey pair offer' again and join within its time; both devices must share a network"
    case .unsupportedVersion: return "install the same taskkey version on both devices"
    default: return nil
    }
  }
}
