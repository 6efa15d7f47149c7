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
