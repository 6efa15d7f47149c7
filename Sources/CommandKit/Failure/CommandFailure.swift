/// An error that knows what a command prints for it and the exit code it
/// ends with. Every error a command of the project can throw conforms
/// (its own module's enum, or through `ExitCodeMap` for TaskKey's
/// libraries), and each conformance switches over every case: no error is
/// turned into a code by a catch-all.
public protocol CommandFailure: Error {
  /// The exit code: the meaning it has in `ExitCode`.
  var exitCode: ExitCode { get }
  /// The line after `<program>: error: `; never secret bytes.
  var message: String { get }
  /// What to do next, or nil.
  var hint: String? { get }
}

/// Ends a command with `code` and no message: the command has reported
/// already (doctor's findings) or its exit code is the answer
/// (`status --check`).
public struct QuietExit: Error, Equatable {
  /// The exit code.
  public let code: ExitCode

  /// Ends with `code`.
  public init(code: ExitCode) { self.code = code }
}

/// What a program prints for an error and the code it exits with: the one
/// map, shared by every command of the project.
public struct FailureReport: Equatable {
  /// The exit code.
  public let code: ExitCode
  /// The line after `<program>: error: `; nil when the command reported
  /// already.
  public let message: String?
  /// The `hint:` line, if any.
  public let hint: String?

  /// The report of `error`. An error that is neither a `CommandFailure`
  /// nor a `QuietExit` is a bug of the program (a library error without a
  /// conformance): it is reported as an internal error, exit 70, with its
  /// type name only, since its description may hold data.
  public init(_ error: any Error) {
    switch error {
    case let quiet as QuietExit:
      (code, message, hint) = (quiet.code, nil, nil)
    case let failure as any CommandFailure:
      (code, message, hint) = (failure.exitCode, failure.message, failure.hint)
    default:
      (code, message, hint) = (.software, "internal error (\(type(of: error)))", "please report this as a bug")
    }
  }
}
