import CommandKit
import FoundationEssentials
import TaskSystem
import TaskerCore
import TaskerGate

/// The entry point of `tasker`: parses the command line, runs one command,
/// and maps every error to a message on standard error and an exit code.
public enum TaskerMain {
  /// The version printed by `tasker --version`.
  public static let version = "0.1.0"

  /// The largest body read from standard input: 16 MiB, the sealed-value limit.
  static let inputLimit = 16 << 20

  static let commands: [any Command.Type] = [
    AddCommand.self, ListCommand.self, ShowCommand.self, EditCommand.self,
    DoneCommand.self, UndoCommand.self, DeleteCommand.self, PageCommand.self, PlanContextCommand.self,
    AttachCommand.self, EncryptCommand.self, RewrapCommand.self, KeysCommand.self, SettingsCommand.self,
    McpCommand.self, ApprovalsCommand.self, ReceiptsCommand.self, GateCommand.self,
  ]

  static var help: String {
    let width = commands.map { $0.name.count }.max() ?? 0
    let list = commands.map { "  \(padded($0.name, to: width + 4))\($0.abstract)" }
    let codes = ExitCode.allCases.map { "  \(padded(String($0.rawValue), to: 6))\($0.summary)" }
    return """
      OVERVIEW: Tasker keeps tasks and pages; notes and page bodies are sealed with TaskKey.

      USAGE: tasker <command> [options]

      OPTIONS:
        -h, --help        Show help; 'tasker <command> --help' for a command.
        --version         Show the version.

      SUBCOMMANDS:
      \(list.joined(separator: "\n"))

      ENVIRONMENT:
        TASKER_HOME       Tasker's directory (default ~/.local/share/tasker).
        TASKKEY_HOME      The TaskKey vault (default ~/.local/share/tasker/keys).

      EXIT CODES:
      \(codes.joined(separator: "\n"))
      """
  }

  /// The environment variables `tasker` reads (and the vault it opens).
  public static let environmentNames: Set<String> = [
    "TASKER_HOME", "TASKKEY_HOME", "XDG_DATA_HOME", "HOME", "XDG_RUNTIME_DIR", "TASKER_ASSISTANT_KEY", "VISUAL",
    "EDITOR",
  ]

  /// Runs `tasker` from the bytes the process was started with. Every
  /// argument, and every variable of `environmentNames`, must be valid
  /// UTF-8: one that is not is refused with exit 65 before anything is read
  /// or written, never repaired into U+FFFD (a repaired title or note would
  /// store other text than the user's, a repaired path would name another
  /// directory).
  ///
  /// - Parameters:
  ///   - argumentBytes: the arguments without the program name.
  ///   - environmentBytes: `NAME=value` entries; other variables that are
  ///     not UTF-8 are left out.
  /// - Returns: the exit code.
  public static func run(argumentBytes: [[UInt8]], environmentBytes: [[UInt8]]) -> Int32 {
    let decoded = CommandLineBytes.decode(
      arguments: argumentBytes, environment: environmentBytes, checking: environmentNames)
    let refused: String? =
      switch decoded.refusal {
      case .environmentVariable(let name)?: "the environment variable \(name)"
      case .argument(let index)?: "argument \(index)"
      case nil: nil
      }
    if let refused {
      let error = CLIError.invalidUTF8(source: refused)
      report(error.message, hint: error.hint, to: OutputStream())
      return error.exitCode.rawValue
    }
    return run(decoded.arguments, environment: decoded.environment)
  }

  /// Runs `tasker` with `arguments` (without the program name).
  ///
  /// - Returns: the exit code.
  public static func run(
    _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> Int32 {
    let output = OutputStream()
    let context = CommandContext(output: output, environment: environment) {
      try readStandardInput(limit: inputLimit)
    }
    do {
      try dispatch(arguments, context: context)
      context.warnIfLogKept()
      return ExitCode.success.rawValue
    } catch let error as CLIError {
      report(error.message, hint: error.hint, to: output)
      return error.exitCode.rawValue
    } catch let error as GateError {
      report(error.message, hint: nil, to: output)
      return ExitCode.of(error).rawValue
    } catch let error as TaskerError {
      report(error.description, hint: error.hint, to: output)
      return ExitCode.of(error).rawValue
    } catch {
      report("\(error)", hint: nil, to: output)
      return ExitCode.software.rawValue
    }
  }

  /// Prints an error and its hint on standard error. The message is one
  /// line, so every control character in it is made visible (it may echo a
  /// refused value); the hint may hold a usage of several lines.
  static func report(_ message: String, hint: String?, to output: OutputStream) {
    output.printError("tasker: error: \(TerminalText.visible(message))")
    if let hint { output.printError("hint: \(hint)") }
  }

  static func dispatch(_ arguments: [String], context: CommandContext) throws {
    guard let first = arguments.first else {
      context.output.printError(help)
      throw CLIError.usage(message: "missing command", usage: "usage: tasker <command> [options]")
    }
    switch first {
    case "-h", "--help", "help":
      if arguments.count > 1, let command = commands.first(where: { $0.name == arguments[1] }) {
        try context.output.print(command.help)
      } else {
        try context.output.print(help)
      }
      return
    case "--version":
      try context.output.print("tasker \(version)")
      return
    default:
      break
    }
    guard let command = commands.first(where: { $0.name == first }) else {
      throw CLIError.usage(message: "unknown command '\(first)'", usage: "see 'tasker --help'")
    }
    let rest = Array(arguments.dropFirst())
    if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) {
      try context.output.print(command.help)
      return
    }
    var parser = Arguments(rest, usage: command.usage)
    try command.init(parsing: &parser).run(context)
  }

  static func readStandardInput(limit: Int) throws -> [UInt8] {
    var bytes = [UInt8]()
    while true {
      let chunk = try readStandardInputChunk()
      if chunk.isEmpty { return bytes }
      bytes.append(contentsOf: chunk)
      guard bytes.count <= limit else { throw CLIError.inputTooLarge(source: "standard input", limit: limit) }
    }
  }

  /// The next bytes of standard input, 1 MiB unless the input ends first;
  /// empty at the end.
  static func readStandardInputChunk() throws -> [UInt8] {
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    do {
      let count = try chunk.withUnsafeMutableBytes { try FileDescriptor.standardInput.read(into: $0) }
      chunk.removeSubrange(count...)
      return chunk
    } catch {
      throw CLIError.cannotRead(path: "standard input", reason: "\(error)")
    }
  }

  /// `text` followed by spaces up to `width` characters.
  static func padded(_ text: String, to width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
  }
}
