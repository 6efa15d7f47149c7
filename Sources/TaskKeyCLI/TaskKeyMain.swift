import CommandKit
import ExitCodeMap
import TaskSystem

/// The entry point of `taskkey`: CommandKit finds the command and parses
/// its line against its declaration; it runs, and any error becomes a
/// message on standard error and an exit code (through CommandKit's
/// `FailureReport`, the one map).
public enum TaskKeyMain {
  /// The version printed by `taskkey --version`.
  public static let version = "0.2.0"

  static let commands: [any CommandDeclaration.Type] = [
    SealCommand.self, OpenCommand.self, KeygenCommand.self,
    InitCommand.self, UnlockCommand.self, LockCommand.self, StatusCommand.self, PassphraseCommand.self,
    ItemCommand.self, SyncCommand.self, PairCommand.self, KeysCommand.self, RotateCommand.self, PromoteCommand.self,
    RewrapCommand.self, RetireCommand.self,
    MintCommand.self, VerifyCommand.self, RevokeCommand.self, ListCommand.self,
    BackupCommand.self, DoctorCommand.self, AttachCommand.self, VectorsCommand.self, CompletionCommand.self,
  ]

  /// `commands`' names, in the same order (a test keeps the two lists
  /// equal): finding the command by name builds no `CommandSpec` but its
  /// own. Building every earlier command's spec cost each process ~0.1 ms
  /// (issue 14, goal 6).
  static let commandNames = [
    "seal", "open", "keygen", "init", "unlock", "lock", "status", "passphrase", "item", "sync", "pair", "keys",
    "rotate",
    "promote", "rewrap", "retire", "mint", "verify", "revoke", "list", "backup", "doctor", "attach", "vectors",
    "completion",
  ]

  /// `taskkey` as CommandKit declares it: help, man page, completions and
  /// the lookup of commands are printed and done from this one value.
  static let program = CommandProgram(
    name: "taskkey", version: version, overview: "TaskKey seals Tasker's notes and manages its keys.",
    commands: commands, commandNames: commandNames,
    environment: [
      ("TASKKEY_HOME", "The vault directory (default $XDG_DATA_HOME/tasker/keys, else ~/.local/share/tasker/keys)."),
      ("XDG_RUNTIME_DIR", "Where the unlock session's keys live while unlocked, when it is a private tmpfs."),
      ("TZ", "The time zone of times shown on a terminal; JSON is always UTC."),
    ],
    user: .taskkey, manual: TaskKeyManual.text)

  /// Runs `taskkey` with `arguments` (without the program name).
  ///
  /// - Returns: the exit code.
  public static func run(_ arguments: [String], streams: StandardStreams) -> Int32 {
    program.run(arguments, streams: streams) { declaration, parsed, streams in
      guard let command = declaration as? any Command.Type else {
        preconditionFailure("\(parsed.path) is declared but not a taskkey command")
      }
      try command.init(parsed).run(streams)
    }
  }
}

extension TaskKeyMain {
  /// The environment variables `taskkey` reads.
  public static let environmentNames: Set<String> = ["TASKKEY_HOME", "XDG_DATA_HOME", "HOME", "XDG_RUNTIME_DIR"]

  /// Runs `taskkey` from the bytes the process was started with: an
  /// argument or a variable of `environmentNames` that is not valid UTF-8
  /// is refused with exit 65 before anything is read or written, never
  /// repaired (CommandKit's `CommandLineRefusal`).
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
    program.run(
      argumentBytes: argumentBytes, environmentBytes: environmentBytes, environmentNames: environmentNames,
      streams: streams, run: run)
  }
}
