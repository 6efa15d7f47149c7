import CommandKit
import ExitCodeMap
import TaskCrypto

/// Every way the `taskkey` command itself can fail (the lower modules'
/// errors reach CommandKit's `FailureReport` as they are, wrapped only to add a line
/// number).
///
/// Messages never include secret bytes; `hint` says what to do next.
public enum CLIError: Error, Equatable, CommandFailure {
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
  /// `vectors check` found files whose cases did not give their expected
  /// outcome.
  case vectorsFailed(count: Int)
  /// A line of a batch (rewrap, retire) is not what the options describe.
  case malformedInput(line: Int, reason: String)
  /// A value in a batch could not be opened or read; nothing was written.
  case valueRefused(line: Int, TaskCryptoError)
  /// `retire` found values that the key still seals.
  case keyStillInUse(keyID: String, count: Int, firstLine: Int, input: String)
  /// The passphrase and its confirmation differ.
  case passphraseMismatch
  /// A passphrase is needed and there is no terminal to ask for it.
  case noTerminal
  /// The new passphrase is weak and `--accept-weak-passphrase` was not
  /// given; `reason` says why it is weak.
  case weakPassphrase(reason: String)
  /// Binary output would go to a terminal.
  case binaryToTerminal(what: String)
  /// A sync bundle did not open with the passphrase given: it takes the
  /// passphrase of the vault that exported it.
  case wrongBundlePassphrase
  /// `taskkey pair offer` found no local-network address to listen on.
  case noLocalNetwork
  /// A pairing code longer than any code, refused before it is read.
  case codeTooLong(limit: Int)

  /// The one-line message after `taskkey: error: `.
  public var message: String {
    switch self {
    case .cannotOpen(let path, let reason): return "cannot open '\(path)': \(reason)"
    case .fileExists(let path): return "'\(path)' already exists; refusing to overwrite it"
    case .unsafePermissions(let path, let mode):
      return
        "'\(path)' has mode \(String(mode, radix: 8)); key and passphrase files must not be readable by group or others"
    case .notOwner(let path): return "'\(path)' is not owned by you; refusing to read secrets from it"
    case .notRegularFile(let path): return "'\(path)' is not a regular file"
    case .vectorsFailed(let count): return "\(count) vector file(s) failed"
    case .malformedInput(let line, let reason): return "line \(line): \(reason)"
    case .valueRefused(let line, let error): return "line \(line): \(error.description); nothing was written"
    case .keyStillInUse(let keyID, let count, let firstLine, let input):
      return
        "key \(keyID) still seals \(count) value(s) in the input (first in \(input), line \(firstLine)); it was not retired"
    case .passphraseMismatch: return "the two passphrases differ; nothing was changed"
    case .noTerminal: return "a passphrase is needed and there is no terminal to ask for it"
    case .weakPassphrase(let reason): return "weak passphrase: \(reason); nothing was changed"
    case .binaryToTerminal(let what): return "refusing to write \(what) to a terminal"
    case .wrongBundlePassphrase: return "wrong passphrase for the sync bundle"
    case .noLocalNetwork: return "this machine has no local-network address to offer on"
    case .codeTooLong(let limit): return "the code is longer than \(limit) bytes; a code is four short words"
    }
  }

  /// The exit code of each case (CommandKit's table).
  public var exitCode: ExitCode {
    switch self {
    case .binaryToTerminal: return .usage
    case .cannotOpen: return .noInput
    case .fileExists: return .cannotCreate
    case .unsafePermissions, .notOwner, .notRegularFile: return .permission
    case .malformedInput: return .dataError
    case .vectorsFailed: return .vectorsFailed
    case .valueRefused(_, let error): return error.exitCode
    case .keyStillInUse: return .keyInUse
    case .passphraseMismatch, .weakPassphrase: return .passphraseRefused
    case .noTerminal: return .noTerminal
    case .wrongBundlePassphrase: return .wrongPassphrase
    case .noLocalNetwork: return .unavailable
    case .codeTooLong: return .dataError
    }
  }

  /// What to do next, when there is something useful to say.
  public var hint: String? {
    switch self {
    case .unsafePermissions(let path, _): return "run: chmod 600 '\(path)'"
    case .fileExists: return "choose another path, or remove the file yourself first"
    case .keyStillInUse: return "run 'taskkey rewrap' over those values first, or retire with --force"
    case .valueRefused(_, .unknownKeyID): return "the value was sealed with a key this vault does not hold"
    case .noTerminal: return "give --passphrase-file F (mode 0600) or --passphrase-fd N"
    case .weakPassphrase:
      return "choose a longer passphrase (several unrelated words), or add --accept-weak-passphrase"
    case .binaryToTerminal: return "use --out F or redirect standard output"
    case .wrongBundlePassphrase:
      return "a bundle opens with the passphrase of the vault that exported it, as it was at export, "
        + "not with this vault's own"
    case .noLocalNetwork: return "connect to the network both devices share, or give --listen ADDR:PORT"
    default: return nil
    }
  }
}
