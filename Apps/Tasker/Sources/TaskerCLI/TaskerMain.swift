import CommandKit
import ExitCodeMap
import TaskSystem
import TaskerCore
import TaskerGate

/// The entry point of `tasker`: CommandKit finds the command and parses
/// its line against its declaration; it runs, and any error becomes a
/// message on standard error and an exit code from the project's one table
/// (CommandKit's `FailureReport`).
public enum TaskerMain {
  /// The version printed by `tasker --version`; the gate reports the same
  /// in `serverInfo.version`.
  public static let version = GateVersion.current

  /// The largest body read from standard input or a file: 16 MiB, the
  /// sealed-value limit.
  static let inputLimit = 16 << 20

  static let commands: [any CommandDeclaration.Type] = [
    AddCommand.self, ListCommand.self, ShowCommand.self, EditCommand.self, DoneCommand.self, UndoCommand.self,
    DeleteCommand.self, PageCommand.self, PlanContextCommand.self, PlanCommand.self, AskCommand.self,
    ProviderCommand.self, AttachCommand.self, EncryptCommand.self,
    RewrapCommand.self, KeysCommand.self, SettingsCommand.self, DoctorCommand.self, McpCommand.self,
    ApprovalsCommand.self, ReceiptsCommand.self, GateCommand.self, SyncCommand.self, ConflictsCommand.self,
    ResolveCommand.self, CompletionCommand.self,
  ]

  /// `commands`' names, in the same order (a test keeps them equal).
  static let commandNames = [
    "add", "list", "show", "edit", "done", "undo", "delete", "page", "plan-context", "plan", "ask", "provider",
    "attach", "encrypt", "rewrap",
    "keys", "settings", "doctor", "mcp", "approvals", "receipts", "gate", "sync", "conflicts", "resolve", "completion",
  ]

  /// `tasker` as CommandKit declares it.
  static let program = CommandProgram(
    name: "tasker", version: version,
    overview: "Tasker keeps tasks and pages; notes and page bodies are sealed with TaskKey.", commands: commands,
    commandNames: commandNames,
    environment: [
      ("TASKER_HOME", "Tasker's directory (default $XDG_DATA_HOME/tasker, else ~/.local/share/tasker)."),
      ("TASKKEY_HOME", "The TaskKey vault (default ~/.local/share/tasker/keys)."),
      ("TASKER_ASSISTANT_KEY", "(tasker mcp over stdio) Run as the assistant this key belongs to."),
      ("TASKER_ASSISTANT_KEY_FILE", "(tasker mcp over stdio) The same, read from this file (mode 0600, yours)."),
      ("VISUAL, EDITOR", "The editor of --notes-in-editor and --body-in-editor."),
      ("TZ", "The time zone of times and of 'today' for due dates; JSON times are UTC."),
    ],
    user: .tasker, manual: TaskerManual.text)

  /// The environment variables `tasker` reads (and the vault it opens).
  public static let environmentNames: Set<String> = [
    "TASKER_HOME", "TASKKEY_HOME", "XDG_DATA_HOME", "HOME", "XDG_RUNTIME_DIR", "TASKER_ASSISTANT_KEY",
    "TASKER_ASSISTANT_KEY_FILE", "VISUAL", "EDITOR",
  ]

  /// Runs `tasker` from the bytes the process was started with: an
  /// argument or a variable of `environmentNames` that is not valid UTF-8
  /// is refused with exit 65 before anything is read or written, never
  /// repaired into U+FFFD (CommandKit's `CommandLineRefusal`: a repaired
  /// title or note would store other text than the user's, a repaired path
  /// would name another directory).
  ///
  /// - Parameters:
  ///   - argumentBytes: the arguments without the program name.
  ///   - environmentBytes: `NAME=value` entries; other variables that are
  ///     not UTF-8 are left out.
  /// - Returns: the exit code.
  public static func run(argumentBytes: [[UInt8]], environmentBytes: [[UInt8]]) -> Int32 {
    program.run(
      argumentBytes: argumentBytes, environmentBytes: environmentBytes, environmentNames: environmentNames,
      streams: StandardStreams.process(environment:), run: run)
  }

  /// Runs `tasker` with `arguments` (without the program name).
  ///
  /// - Returns: the exit code.
  public static func run(_ arguments: [String], streams: StandardStreams) -> Int32 {
    program.run(arguments, streams: streams) { declaration, parsed, streams in
      guard let command = declaration as? any Command.Type else {
        preconditionFailure("\(parsed.path) is declared but not a tasker command")
      }
      let context = CommandContext(streams: streams)
      try command.init(parsed).run(context)
      context.warnIfLogKept()
    }
  }
}
