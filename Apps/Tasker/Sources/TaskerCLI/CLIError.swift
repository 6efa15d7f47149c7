import CommandKit
import TaskerCore

/// Errors of the command layer itself; store errors pass through as
/// `TaskerError`.
enum CLIError: Error, CommandFailure {
  /// An input file cannot be opened or read.
  case cannotRead(path: String, reason: String)
  /// Output could not be written.
  case cannotWrite(path: String, reason: String)
  /// `keys --check`: the key still seals `count` stored values.
  case keyInUse(keyID: String, count: Int)
  /// An argument, an environment variable, standard input or a file is
  /// not valid UTF-8; `source` names which. Refused, never repaired.
  case invalidUTF8(source: String)
  /// `--notes TEXT` or `--body TEXT`: body text on the command line, where
  /// every local user can read it. `editor` says whether the command also
  /// takes `--…-in-editor`.
  case textOnCommandLine(option: String, editor: Bool)
  /// The editor could not start, or did not exit 0; nothing was changed.
  case editorFailed(command: String, reason: String)

  var message: String {
    switch self {
    case .cannotRead(let path, let reason): return "cannot read '\(path)': \(reason)"
    case .cannotWrite(let path, let reason): return "cannot write '\(path)': \(reason)"
    case .keyInUse(let keyID, let count): return "key \(keyID) still seals \(count) stored values"
    case .invalidUTF8(let source): return "\(source) is not valid UTF-8; nothing was changed"
    case .textOnCommandLine(let option, _):
      return "\(option) takes '-' (standard input), not the text: "
        + "a command line is readable by every local user (/proc/PID/cmdline)"
    case .editorFailed(let command, let reason): return "the editor '\(command)' \(reason); nothing was changed"
    }
  }

  var hint: String? {
    switch self {
    case .keyInUse: return "run 'tasker rewrap' first, then check again"
    case .invalidUTF8: return "Tasker stores text as UTF-8 and repairs none: convert it first (iconv -t UTF-8)"
    case .textOnCommandLine(let option, let editor):
      return "pipe it: printf '%s' TEXT | tasker … \(option) -, or give \(option)-file FILE"
        + (editor ? ", or \(option)-in-editor" : "")
    case .editorFailed: return "set VISUAL or EDITOR to an editor that exits 0 after saving"
    default: return nil
    }
  }

  var exitCode: ExitCode {
    switch self {
    case .textOnCommandLine: return .usage
    case .cannotRead: return .noInput
    case .cannotWrite: return .ioError
    case .invalidUTF8: return .dataError
    case .keyInUse: return .keyInUse
    case .editorFailed: return .unavailable
    }
  }
}
