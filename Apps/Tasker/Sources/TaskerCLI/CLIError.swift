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
  /// A key option's value starts with `tkid_` but is not a key id.
  case malformedKeyID(option: String, text: String)
  /// No assistant key in the registry has this name.
  case unknownAssistantName(option: String, name: String)
  /// The name belongs to several keys and none of them is current.
  case ambiguousAssistantName(option: String, name: String, ids: [String])
  /// A batch of approvals stopped at `id` with `cause`'s report;
  /// `decided` were approved or denied before it, `untried` not reached.
  case approvalsStopped(id: Int64, cause: FailureReport, decided: [Int64], untried: [Int64])

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
    case .malformedKeyID(let option, let text):
      return "\(option) '\(TerminalText.visible(text))' is not a key id (tkid_ and 16 lowercase hex digits)"
    case .unknownAssistantName(let option, let name):
      return "\(option): no assistant key is named '\(TerminalText.visible(name))'"
    case .ambiguousAssistantName(let option, let name, let ids):
      return "\(option): '\(TerminalText.visible(name))' names \(ids.count) keys and none is current: "
        + ids.joined(separator: ", ")
    case .approvalsStopped(let id, let cause, let decided, let untried):
      let before = decided.isEmpty ? "none" : decided.map { "#\($0)" }.joined(separator: ", ")
      let after = untried.isEmpty ? "" : "; not tried: " + untried.map { "#\($0)" }.joined(separator: ", ")
      return "stopped at #\(id): \(cause.message ?? "it failed"); already decided: \(before)\(after)"
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
    case .malformedKeyID, .unknownAssistantName:
      return "'taskkey list' shows every key's id and name"
    case .ambiguousAssistantName(let option, _, _): return "give one key's id with \(option)"
    case .approvalsStopped(_, let cause, _, _): return cause.hint
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
    case .malformedKeyID, .ambiguousAssistantName: return .usage
    case .unknownAssistantName: return .unknownAssistantKey
    case .approvalsStopped(_, let cause, _, _): return cause.code
    }
  }
}
