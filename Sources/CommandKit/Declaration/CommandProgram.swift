/// A whole command-line program declared once: its name, version, command
/// table, environment and the exit codes it uses. Its top-level help, the
/// lookup of a command by name (with "did you mean"), the man page and the
/// bash, zsh and fish completions are all printed from this value.
public struct CommandProgram {
  /// The program's name as typed: `taskkey`.
  public let name: String
  /// The version `--version` prints.
  public let version: String
  /// The OVERVIEW sentence of the top-level help.
  public let overview: String
  /// The commands, in the order help lists them.
  public let commands: [any CommandDeclaration.Type]
  /// `commands`' names, in the same order: finding a command by name then
  /// builds no declaration but its own (a test keeps the lists equal).
  public let commandNames: [String]
  /// The environment variables the program reads, with one line each.
  public let environment: [(name: String, help: String)]
  /// Which program of the project this is, for the exit-code table.
  public let user: ExitCodeUsers
  /// The man page's text around the commands.
  public let manual: ManualText

  /// Declares a program.
  public init(
    name: String, version: String, overview: String, commands: [any CommandDeclaration.Type],
    commandNames: [String], environment: [(name: String, help: String)], user: ExitCodeUsers, manual: ManualText
  ) {
    self.name = name
    self.version = version
    self.overview = overview
    self.commands = commands
    self.commandNames = commandNames
    self.environment = environment
    self.user = user
    self.manual = manual
  }

  /// The exit codes this program can return, in numeric order.
  public var exitCodes: [ExitCode] { ExitCode.allCases.filter { $0.users.contains(user) } }

  /// `taskkey <command> [options]`.
  public var usage: String { "\(name) <command> [options]" }

  /// The top-level help: OVERVIEW, USAGE, OPTIONS, SUBCOMMANDS,
  /// ENVIRONMENT and EXIT CODES.
  public var help: String {
    let list = commands.map { HelpText.entry($0.spec.name, $0.spec.abstract, wrapped: false) }
    let codes = exitCodes.map { "  " + padded(String($0.rawValue), to: 6) + $0.summary }
    let variables = environment.map { HelpText.entry($0.name, $0.help) }
    return """
      OVERVIEW: \(overview)

      USAGE: \(usage)

      OPTIONS:
      \(HelpText.entry("-h, --help", "Show help; '\(name) <command> --help' for a command."))
      \(HelpText.entry("--version", "Show the version."))
      \(HelpText.entry("-q, --quiet", CommandSpec.quietOption.help))
      \(HelpText.entry("-v, --verbose", CommandSpec.verboseOption.help))

      SUBCOMMANDS:
      \(list.joined(separator: "\n"))

      ENVIRONMENT:
      \(variables.joined(separator: "\n"))

      EXIT CODES:
      \(codes.joined(separator: "\n"))
      """
  }

  /// Every command and subcommand, depth first.
  public var nodes: [CommandNode] {
    func walk(_ command: any CommandDeclaration.Type, _ prefix: [String]) -> [CommandNode] {
      let node = CommandNode(command: command, program: name, words: prefix + [command.spec.name])
      return [node] + command.subcommands.flatMap { walk($0, node.words) }
    }
    return commands.flatMap { walk($0, []) }
  }

  /// What a command line asks for.
  public enum Request {
    /// Print this text on standard output and exit 0 (`--help`,
    /// `--version`).
    case print(String)
    /// No command was given: print the help on standard error, exit 64.
    case missingCommand(String)
    /// Run `command` with its parsed line.
    case run(any CommandDeclaration.Type, ParsedArguments)
  }

  /// Reads the global flags (`-q`, `-v` before the command), finds the
  /// command and subcommand, and parses the rest against its declaration.
  ///
  /// - Parameters:
  ///   - arguments: the words after the program's name.
  ///   - verbosity: set by `-q`/`-v` before or after the command.
  /// - Returns: what to do.
  /// - Throws: `UsageError` for an unknown command or option (naming the
  ///   closest), a group without its subcommand, and every refusal of the
  ///   parser.
  public func request(_ arguments: [String], verbosity: inout Verbosity) throws -> Request {
    var rest = arguments[...]
    while let first = rest.first, ["-q", "--quiet", "-v", "--verbose"].contains(first) {
      verbosity = first == "-q" || first == "--quiet" ? .quiet : .verbose
      rest = rest.dropFirst()
    }
    guard let first = rest.first else { return .missingCommand(help) }
    switch first {
    case "-h", "--help", "help":
      let words = Array(rest.dropFirst())
      if !words.isEmpty, let (command, path, _) = try? find(words[...]) {
        return .print(HelpText.render(command, path: path))
      }
      return .print(help)
    case "--version":
      return .print("\(name) \(version)")
    default:
      break
    }
    let (command, path, remaining) = try find(rest)
    if remaining.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) {
      return .print(HelpText.render(command, path: path))
    }
    let parsed = try ParsedArguments(Array(remaining), spec: command.spec, path: path)
    if !command.subcommands.isEmpty {
      let names = command.subcommands.map { $0.spec.name }
      throw parsed.usageError("missing subcommand: \(ParsedArguments.list(names))")
    }
    if parsed.flag(CommandSpec.quietOption) { verbosity = .quiet }
    if parsed.flag(CommandSpec.verboseOption) { verbosity = .verbose }
    return .run(command, parsed)
  }

  /// Runs a whole command line: `--help` and `--version` printed, a
  /// missing command answered with the help on standard error (64), the
  /// command found, parsed and handed to `perform`, and any error printed
  /// once as `<name>: error: …` with its `hint:` line.
  ///
  /// - Parameters:
  ///   - arguments: the words after the program's name.
  ///   - streams: the process's streams; `-q`/`-v` set their verbosity.
  ///   - perform: builds and runs the command found, with the streams.
  /// - Returns: the exit code from the one table.
  public func run(
    _ arguments: [String], streams: StandardStreams,
    perform: (any CommandDeclaration.Type, ParsedArguments, StandardStreams) throws -> Void
  ) -> Int32 {
    var streams = streams
    do {
      switch try request(arguments, verbosity: &streams.verbosity) {
      case .print(let text):
        try streams.print(text)
      case .missingCommand(let help):
        streams.printError(help)
        return ExitCode.usage.rawValue
      case .run(let command, let parsed):
        try perform(command, parsed, streams)
      }
      return ExitCode.success.rawValue
    } catch {
      return report(error, to: streams)
    }
  }

  /// Prints `error` as `<name>: error: …` (one line, control characters
  /// made visible) and its `hint:` line on standard error, nothing when the
  /// command reported already (`QuietExit`).
  ///
  /// - Returns: its exit code.
  @discardableResult
  public func report(_ error: any Error, to streams: StandardStreams) -> Int32 {
    let failure = FailureReport(error)
    if let message = failure.message {
      streams.printError("\(name): error: \(TerminalText.visible(message))")
      if let hint = failure.hint { streams.printError("hint: \(hint)") }
    }
    return failure.code.rawValue
  }

  /// The command named by the first words, its path (`taskkey item set`)
  /// and the words after it.
  ///
  /// - Throws: `UsageError` naming the closest command for a typo.
  public func find(_ words: ArraySlice<String>) throws -> (any CommandDeclaration.Type, String, ArraySlice<String>) {
    guard let first = words.first else { throw UsageError(message: "missing command", usage: "usage: \(usage)") }
    guard let index = commandNames.firstIndex(of: first) else {
      let guess = closestWord(to: first, among: commandNames)
      throw UsageError(
        message: "unknown command '\(first)'" + (guess.map { "; did you mean '\($0)'?" } ?? ""),
        usage: "usage: \(usage); see '\(name) --help'")
    }
    var command: any CommandDeclaration.Type = commands[index]
    var path = "\(name) \(first)"
    var rest = words.dropFirst()
    while !command.subcommands.isEmpty, let word = rest.first, !word.hasPrefix("-") {
      guard let sub = command.subcommands.first(where: { $0.spec.name == word }) else {
        let names = command.subcommands.map { $0.spec.name }
        let guess = closestWord(to: word, among: names)
        throw UsageError(
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

/// The man page's own text, around what the kit prints from the
/// declarations. Plain text: the kit escapes it for man(7), except
/// `sections`, which is written in man(7) already.
public struct ManualText {
  /// After the program's name on the NAME line: `seal Tasker's notes…`.
  public let title: String
  /// The manual's name in the header: `TaskKey Manual`.
  public let manual: String
  /// The DESCRIPTION paragraphs, plain text.
  public let description: [String]
  /// ENVIRONMENT, FILES, SEE ALSO…, in man(7) (`.SH`, `.TP`), after EXIT
  /// STATUS.
  public let sections: String

  /// The man page's text.
  public init(title: String, manual: String, description: [String], sections: String) {
    self.title = title
    self.manual = manual
    self.description = description
    self.sections = sections
  }
}

/// `text` cut or padded with spaces to exactly `width` characters (what
/// Foundation's `padding(toLength:withPad:startingAt:)` did, without
/// linking Foundation's string code into the binary).
public func padded(_ text: String, to width: Int) -> String {
  text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
}
