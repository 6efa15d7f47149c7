import TaskSystem

/// The entry point of `taskkey`: finds the command, parses its line
/// against its declaration, runs it, and turns any error into a message on
/// standard error and an exit code (through `FailureReport`, the one map).
public enum TaskKeyMain {
  /// The version printed by `taskkey --version`.
  public static let version = "0.2.0"

  static let commands: [any Command.Type] = [
    SealCommand.self, OpenCommand.self, KeygenCommand.self,
    InitCommand.self, UnlockCommand.self, LockCommand.self, StatusCommand.self, PassphraseCommand.self,
    ItemCommand.self, SyncCommand.self, KeysCommand.self, RotateCommand.self, PromoteCommand.self,
    RewrapCommand.self, RetireCommand.self,
    MintCommand.self, VerifyCommand.self, RevokeCommand.self, ListCommand.self,
    BackupCommand.self, DoctorCommand.self, AttachCommand.self, VectorsCommand.self, CompletionCommand.self,
  ]

  /// `commands`' names, in the same order (a test keeps the two lists
  /// equal): finding the command by name builds no `CommandSpec` but its
  /// own. Building every earlier command's spec cost each process ~0.1 ms
  /// (issue 14, goal 6).
  static let commandNames = [
    "seal", "open", "keygen", "init", "unlock", "lock", "status", "passphrase", "item", "sync", "keys", "rotate",
    "promote", "rewrap", "retire", "mint", "verify", "revoke", "list", "backup", "doctor", "attach", "vectors",
    "completion",
  ]

  static let usage = "taskkey <command> [options]"

  static var help: String {
    let list = commands.map { HelpText.entry($0.spec.name, $0.spec.abstract, wrapped: false) }
    let codes = ExitCode.allCases.map {
      "  " + padded(String($0.rawValue), to: 6) + $0.summary
    }
    return """
      OVERVIEW: TaskKey seals Tasker's notes and manages its keys.

      USAGE: \(usage)

      OPTIONS:
      \(HelpText.entry("-h, --help", "Show help; 'taskkey <command> --help' for a command."))
      \(HelpText.entry("--version", "Show the version."))
      \(HelpText.entry("-q, --quiet", CommandSpec.quietOption.help))
      \(HelpText.entry("-v, --verbose", CommandSpec.verboseOption.help))

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
    var streams = streams
    do {
      return try dispatch(arguments, streams: &streams).rawValue
    } catch {
      let failure = FailureReport(error)
      if let message = failure.message {
        streams.printError("taskkey: error: \(message)")
        if let hint = failure.hint { streams.printError("hint: \(hint)") }
      }
      return failure.code.rawValue
    }
  }

  /// Reads global flags, finds the command (and subcommand), and runs it.
  static func dispatch(_ arguments: [String], streams: inout StandardStreams) throws -> ExitCode {
    var rest = arguments[...]
    while let first = rest.first, ["-q", "--quiet", "-v", "--verbose"].contains(first) {
      streams.verbosity = first.hasPrefix("-q") || first == "--quiet" ? .quiet : .verbose
      rest = rest.dropFirst()
    }
    guard let first = rest.first else {
      streams.printError(help)
      return .usage
    }
    switch first {
    case "-h", "--help", "help":
      let words = Array(rest.dropFirst())
      if let (command, path, _) = try? find(words[...]), !words.isEmpty {
        try streams.print(HelpText.render(command, path: path))
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
    let (command, path, remaining) = try find(rest)
    if remaining.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) {
      try streams.print(HelpText.render(command, path: path))
      return .success
    }
    let parsed = try ParsedArguments(Array(remaining), spec: command.spec, path: path)
    if !command.subcommands.isEmpty {
      let names = command.subcommands.map { $0.spec.name }
      throw parsed.usageError("missing subcommand: \(ParsedArguments.list(names))")
    }
    if parsed.flag(CommandSpec.quietOption) { streams.verbosity = .quiet }
    if parsed.flag(CommandSpec.verboseOption) { streams.verbosity = .verbose }
    try command.init(parsed).run(streams)
    return .success
  }

  /// The command named by the first words, its path (`taskkey item set`)
  /// and the words after it.
  ///
  /// - Throws: a usage error naming the closest command for a typo.
  static func find(_ words: ArraySlice<String>) throws -> (any Command.Type, String, ArraySlice<String>) {
    guard let first = words.first else { throw CLIError.usage(message: "missing command", usage: "usage: \(usage)") }
    guard let index = commandNames.firstIndex(of: first) else {
      let guess = closestWord(to: first, among: commandNames)
      throw CLIError.usage(
        message: "unknown command '\(first)'" + (guess.map { "; did you mean '\($0)'?" } ?? ""),
        usage: "usage: \(usage); see 'taskkey --help'")
    }
    var command: any Command.Type = commands[index]
    var path = "taskkey \(first)"
    var rest = words.dropFirst()
    while !command.subcommands.isEmpty, let word = rest.first, !word.hasPrefix("-") {
      guard let sub = command.subcommands.first(where: { $0.spec.name == word }) else {
        let names = command.subcommands.map { $0.spec.name }
        let guess = closestWord(to: word, among: names)
        throw CLIError.usage(
          message: "unknown subcommand '\(word)' of '\(path)'"
            + (guess.map { "; did you mean '\($0)'?" } ?? "; use \(ParsedArguments.list(names))"),
          usage: "usage: " + HelpText.usageLine(command.spec, path: path, subcommands: command.subcommands))
      }
      command = sub
      path += " \(word)"
      rest = rest.dropFirst()
    }
    return (command, path, rest)
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
    let decoded = CommandLineBytes.decode(
      arguments: argumentBytes, environment: environmentBytes, checking: environmentNames)
    let refused: String? =
      switch decoded.refusal {
      case .environmentVariable(let name)?: "the environment variable \(name) is not valid UTF-8"
      case .argument(let index)?: "argument \(index) is not valid UTF-8"
      case nil: nil
      }
    let made = streams(decoded.environment)
    if let refused {
      made.printError("taskkey: error: \(refused); taskkey takes only UTF-8 arguments and paths")
      made.printError("hint: name the file with UTF-8 bytes; contexts are bound byte for byte, so none is repaired")
      return ExitCode.usage.rawValue
    }
    return run(decoded.arguments, streams: made)
  }
}
