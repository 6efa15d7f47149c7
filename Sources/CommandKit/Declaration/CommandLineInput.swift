import TaskSystem

/// An argument, or an environment variable the program reads, that is not
/// valid UTF-8: refused before anything is read or written, never repaired
/// (a repaired `--context` would bind other bytes than the caller's, a
/// repaired title would store other text, a repaired path would name
/// another file). Exit 65 in every program of the project.
public struct CommandLineRefusal: Error, Equatable, CommandFailure {
  /// Which input, from TaskSystem's decoder.
  public let refusal: CommandLineBytes.Refusal
  /// The program's name, for the message.
  public let program: String

  /// `.dataError` (65).
  public var exitCode: ExitCode { .dataError }

  /// `argument 2 is not valid UTF-8; …`.
  public var message: String {
    let what =
      switch refusal {
      case .argument(let index): "argument \(index)"
      case .environmentVariable(let name): "the environment variable \(name)"
      }
    return "\(what) is not valid UTF-8; \(program) takes only UTF-8 and repairs none, so nothing was read or written"
  }

  /// What to do.
  public var hint: String? {
    "convert it first (iconv -t UTF-8): contexts, titles and paths are used byte for byte"
  }
}

extension CommandProgram {
  /// Runs the program from the bytes the process was started with: every
  /// argument, and every variable of `environmentNames`, must be valid
  /// UTF-8, else `CommandLineRefusal` (65) before anything else is done.
  ///
  /// - Parameters:
  ///   - argumentBytes: the arguments without the program name.
  ///   - environmentBytes: `NAME=value` entries; other variables that are
  ///     not UTF-8 are left out.
  ///   - environmentNames: the variables the program reads.
  ///   - streams: makes the streams for the decoded environment.
  ///   - run: runs the decoded arguments.
  /// - Returns: the exit code.
  public func run(
    argumentBytes: [[UInt8]], environmentBytes: [[UInt8]], environmentNames: Set<String>,
    streams: ([String: String]) -> StandardStreams, run: ([String], StandardStreams) -> Int32
  ) -> Int32 {
    let decoded = CommandLineBytes.decode(
      arguments: argumentBytes, environment: environmentBytes, checking: environmentNames)
    let made = streams(decoded.environment)
    if let refusal = decoded.refusal {
      return report(CommandLineRefusal(refusal: refusal, program: name), to: made)
    }
    return run(decoded.arguments, made)
  }
}
