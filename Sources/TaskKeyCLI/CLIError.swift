import AssistantKeys
import BackupRules
import TaskAttachments
import TaskCrypto
import TaskVault

/// Every way a `taskkey` command can fail, each mapped to one exit code.
///
/// Messages never include secret bytes; `hint` says what to do next.
public enum CLIError: Error, Equatable {
  /// The command line is wrong; `usage` is the command's usage line.
  case usage(message: String, usage: String)
  /// A file could not be opened or read.
  case cannotOpen(path: String, reason: String)
  /// A file exists where a new one was to be created.
  case fileExists(path: String)
  /// A file's mode or owner is unsafe.
  case unsafePermissions(path: String, mode: UInt32)
  /// A file is not owned by the user running `taskkey`.
  case notOwner(path: String)
  /// A path is not a regular file (a directory, a device, a symlink).
  case notRegularFile(path: String)
  /// A write, read or sync failed.
  case io(path: String, call: String, errno: Int32)
  /// Standard input was larger than the command accepts.
  case inputTooLarge(limit: Int)
  /// A cryptographic operation failed.
  case crypto(TaskCryptoError)
  /// `vectors check` found files whose cases did not give their expected
  /// outcome.
  case vectorsFailed(count: Int)
  /// A line of a batch (rewrap, retire) is not what the options describe.
  case malformedInput(line: Int, reason: String)
  /// A value in a batch could not be opened or read; nothing was written.
  case valueRefused(line: Int, TaskCryptoError)
  /// `retire` found values that the key still seals.
  case keyStillInUse(keyID: String, count: Int, firstLine: Int, input: String)
  /// A vault operation failed.
  case vault(TaskVaultError)
  /// The passphrase and its confirmation differ.
  case passphraseMismatch
  /// An assistant-key operation failed.
  case assistant(AssistantKeyError)
  /// A backup, restore or doctor run failed.
  case backup(BackupError)
  /// An attachment seal, open or rewrap failed.
  case attachment(AttachmentError)

  /// The exit code for this error.
  public var exitCode: ExitCode {
    switch self {
    case .usage: return .usage
    case .cannotOpen: return .noInput
    case .fileExists: return .ioError
    case .unsafePermissions, .notOwner, .notRegularFile: return .permission
    case .io: return .ioError
    case .inputTooLarge: return .dataError
    case .vectorsFailed: return .vectorsFailed
    case .malformedInput: return .dataError
    case .valueRefused(_, let error): return CLIError.crypto(error).exitCode
    case .keyStillInUse: return .keyInUse
    case .crypto(let error):
      switch error {
      case .authenticationFailed, .commitmentMismatch, .chunkAuthenticationFailed, .chunkOutOfPlace,
        .finalChunkAuthenticationFailed, .trailingData:
        return .authenticationFailed
      case .truncatedHeader, .missingFinalChunk, .truncatedChunk, .rangeOutOfBounds: return .dataError
      case .unknownKeyID: return .unknownKey
      case .unsupportedVersion: return .unsupportedVersion
      case .invalidBase64, .truncated, .tooLarge, .invalidUTF8, .invalidKeyID, .malformedKeyFile, .invalidKeySize,
        .duplicateKeyID, .cannotRetirePrimary, .invalidKDFParameters:
        return .dataError
      case .resourceUnavailable: return .osError
      case .backendFailure: return .software
      }
    case .vault(let error): return Self.exitCode(for: error)
    case .passphraseMismatch: return .dataError
    case .assistant(let error): return Self.exitCode(for: error)
    case .backup(let error): return Self.exitCode(for: error)
    case .attachment(let error): return Self.exitCode(for: error)
    }
  }

  /// The one-line message after `taskkey: error: `.
  public var message: String {
    switch self {
    case .usage(let message, _): return message
    case .cannotOpen(let path, let reason): return "cannot open '\(path)': \(reason)"
    case .fileExists(let path): return "'\(path)' already exists; refusing to overwrite it"
    case .unsafePermissions(let path, let mode):
      return
        "'\(path)' has mode \(String(mode, radix: 8)); key and passphrase files must not be readable by group or others"
    case .notOwner(let path): return "'\(path)' is not owned by you; refusing to read secrets from it"
    case .notRegularFile(let path): return "'\(path)' is not a regular file"
    case .io(let path, let call, let code): return "\(call) failed on '\(path)': \(errnoDescription(code))"
    case .inputTooLarge(let limit): return "standard input is larger than \(limit) bytes"
    case .crypto(let error): return error.description
    case .vectorsFailed(let count): return "\(count) vector file(s) failed"
    case .malformedInput(let line, let reason): return "line \(line): \(reason)"
    case .valueRefused(let line, let error): return "line \(line): \(error.description); nothing was written"
    case .keyStillInUse(let keyID, let count, let firstLine, let input):
      return
        "key \(keyID) still seals \(count) value(s) in the input (first in \(input), line \(firstLine)); it was not retired"
    case .vault(let error): return error.description
    case .passphraseMismatch: return "the two passphrases differ; nothing was changed"
    case .assistant(let error): return error.description
    case .backup(let error): return error.description
    case .attachment(let error): return error.description
    }
  }

  /// What to do next, when there is something useful to say.
  public var hint: String? {
    switch self {
    case .usage(_, let usage): return usage
    case .unsafePermissions(let path, _): return "run: chmod 600 '\(path)'"
    case .fileExists: return "choose another path, or remove the file yourself first"
    case .keyStillInUse: return "run 'taskkey rewrap' over those values first, or retire with --force"
    case .valueRefused(_, .unknownKeyID): return "the value was sealed with a key this vault does not hold"
    case .crypto(.authenticationFailed):
      return "check that --context matches the one used to seal, and that the key is right"
    case .crypto(.unknownKeyID): return "the value was sealed with a key this keyring does not hold"
    case .vault(let error): return error.hint
    case .backup(let error): return error.hint
    default: return nil
    }
  }
}
