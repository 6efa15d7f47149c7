import TaskerCore

/// Errors of the command layer itself; store errors pass through as
/// `TaskerError`.
enum CLIError: Error {
  /// The command line is wrong.
  case usage(message: String, usage: String)
  /// An input file cannot be opened or read.
  case cannotRead(path: String, reason: String)
  /// Output could not be written.
  case cannotWrite(path: String, reason: String)
  /// Standard input held more than the limit.
  case inputTooLarge(limit: Int)
  /// `keys --check`: the key still seals `count` stored values.
  case keyInUse(keyID: String, count: Int)

  var message: String {
    switch self {
    case .usage(let message, _): return message
    case .cannotRead(let path, let reason): return "cannot read '\(path)': \(reason)"
    case .cannotWrite(let path, let reason): return "cannot write '\(path)': \(reason)"
    case .inputTooLarge(let limit): return "standard input is larger than \(limit) bytes"
    case .keyInUse(let keyID, let count): return "key \(keyID) still seals \(count) stored values"
    }
  }

  var hint: String? {
    switch self {
    case .usage(_, let usage): return usage
    case .keyInUse: return "run 'tasker rewrap' first, then check again"
    default: return nil
    }
  }

  var exitCode: ExitCode {
    switch self {
    case .usage: return .usage
    case .cannotRead: return .noInput
    case .cannotWrite: return .ioError
    case .inputTooLarge: return .dataError
    case .keyInUse: return .keyInUse
    }
  }
}
