/// The entry point of `taskkey`: parses the command line, runs one command,
/// and maps every error to a message on standard error and an exit code.
public enum TaskKeyMain {
  /// The version printed by `taskkey --version`.
  public static let version = "0.1.0"

  static let commands: [any Command.Type] = [
    SealCommand.self, OpenCommand.self, KeygenCommand.self,
    InitCommand.self, UnlockCommand.self, LockCommand.self, StatusCommand.self, PassphraseCommand.self,
    ItemCommand.self, SyncCommand.self, RewrapCommand.self, RetireCommand.self,
    MintCommand.self, VerifyCommand.self, RevokeCommand.self, RotateCommand.self, ListCommand.self,
    BackupCommand.self, DoctorCommand.self, VectorsCommand.self, CompletionCommand.self, AttachCommand.self,
  ]

  static let usage = "taskkey <command> [options]"

  static var help: String {
    let width = commands.map { $0.name.count }.max() ?? 0
    let list = commands.map { "  \($0.name.padding(toLength: width + 4, withPad: " ", startingAt: 0))\($0.abstract)" }
    let codes = ExitCode.allCases.map {
      "  \(String($0.rawValue).padding(toLength: 6, withPad: " ", startingAt: 0))\($0.summary)"
    }
    return """
      OVERVIEW: TaskKey seals Tasker's notes and manages its keys.

      USAGE: \(usage)

      OPTIONS:
        -h, --help        Show help; 'taskkey <command> --help' for a command.
        --version         Show the version.

      SUBCOMMANDS:
      \(list.joined(separator: "\n"))

      EXIT CODES:
      \(codes.joined(separator: "\n"))
      """
  }

  /// Runs `taskkey` with `arguments` (without the program name).
  ///
  /// - Returns: the exit code.
  public static func run(_ arguments: [String], streams: StandardStreams) -> Int32 {
    do {
      return try dispatch(arguments, streams: streams).rawValue
    } catch is DoctorUnhealthy {
      // The report is printed already; the exit code says the rest.
      return ExitCode.doctorProblems.rawValue
    } catch let error as CLIError {
      streams.printError("taskkey: error: \(error.message)")
      if let hint = error.hint { streams.printError("hint: \(hint)") }
      return error.exitCode.rawValue
    } catch {
      streams.printError("taskkey: error: \(error)")
      return ExitCode.software.rawValue
    }
  }

  static func dispatch(_ arguments: [String], streams: StandardStreams) throws -> ExitCode {
    guard let first = arguments.first else {
      streams.printError(help)
      return .usage
    }
    switch first {
    case "-h", "--help", "help":
      if arguments.count > 1, let command = commands.first(where: { $0.name == arguments[1] }) {
        try streams.print(command.help)
      } else {
        try streams.print(help)
      }
      return .success
    case "--version":
      try streams.print("taskkey \(version)")
      return .success
    default:
      break
    }
    guard let command = commands.first(where: { $0.name == first }) else {
      throw CLIError.usage(message: "unknown command '\(first)'", usage: "usage: \(usage); see 'taskkey --help'")
    }
    let rest = Array(arguments.dropFirst())
    if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) {
      try streams.print(command.help)
      return .success
    }
    var parser = Arguments(rest, usage: command.usage)
    let instance = try command.init(parsing: &parser)
    try instance.run(streams)
    return .success
  }
}

extension TaskKeyMain {
  /// The environment variables `taskkey` reads.
  public static let environmentNames: Set<String> = ["TASKKEY_HOME", "XDG_DATA_HOME", "HOME", "XDG_RUNTIME_DIR"]

  /// Runs `taskkey` from the bytes the process was started with. Every
  /// argument, and every variable of `environmentNames`, must be valid
  /// UTF-8: one that is not is refused with exit 64 before anything is read
  /// or written, never repaired (a repaired `--context` would bind other
  /// bytes than the caller's, and a repaired path would name another file).
  ///
  /// - Parameters:
  ///   - argumentBytes: the arguments without the program name.
  ///   - environmentBytes: `NAME=value` entries; other variables that are
  ///     not UTF-8 are ignored.
  ///   - streams: makes the streams for the decoded environment.
  /// - Returns: the exit code.
  public static func run(
    argumentBytes: [[UInt8]], environmentBytes: [[UInt8]], streams: ([String: String]) -> StandardStreams
  ) -> Int32 {
    var environment = [String: String]()
    var refused: String?
    for entry in environmentBytes {
      guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
      let name = String(decoding: entry[..<equals], as: UTF8.self)
      if let value = String(validating: entry[(equals + 1)...], as: UTF8.self) {
        environment[name] = value
      } else if environmentNames.contains(name) {
        refused = refused ?? "the environment variable \(name) is not valid UTF-8"
      }
    }
    var arguments = [String]()
    for (index, bytes) in argumentBytes.enumerated() {
      if let argument = String(validating: bytes, as: UTF8.self) {
        arguments.append(argument)
      } else {
        refused = refused ?? "argument \(index + 1) is not valid UTF-8"
      }
    }
    let made = streams(environment)
    if let refused {
      made.printError("taskkey: error: \(refused); taskkey takes only UTF-8 arguments and paths")
      made.printError("hint: name the file with UTF-8 bytes; contexts are bound byte for byte, so none is repaired")
      return ExitCode.usage.rawValue
    }
    return run(arguments, streams: made)
  }
}
