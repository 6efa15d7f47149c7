/// The command line is wrong: an unknown command or option, a missing or
/// extra argument, a value outside its kind. Exit 64 in every program of
/// the project.
public struct UsageError: Error, Equatable, CommandFailure {
  /// What is wrong, in one line (it may echo the word that was refused;
  /// printers make control characters visible).
  public let message: String
  /// The command's usage line, printed as the hint.
  public let usage: String

  /// A usage error.
  public init(message: String, usage: String) {
    self.message = message
    self.usage = usage
  }

  /// Always `.usage` (64).
  public var exitCode: ExitCode { .usage }
  /// The usage line.
  public var hint: String? { usage }
}
