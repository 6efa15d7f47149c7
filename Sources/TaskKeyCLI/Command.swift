/// One `taskkey` command: the declaration of its command line, the values
/// read from it, and what it does. `init` validates; `run` acts.
protocol Command {
  /// The command line it takes: help, man page, completions and the parser
  /// all read this one declaration.
  static var spec: CommandSpec { get }
  /// The commands under this one (`item set`, `sync export`); empty for a
  /// command that runs by itself.
  static var subcommands: [any Command.Type] { get }

  /// Reads and validates the parsed command line.
  init(_ arguments: ParsedArguments) throws
  /// Does the work, writing only through `streams`.
  func run(_ streams: StandardStreams) throws
}

extension Command {
  /// No subcommands unless a command declares some.
  static var subcommands: [any Command.Type] { [] }
}

/// A command that only groups others (`item`, `sync`, `backup`): it never
/// runs by itself.
protocol CommandGroup: Command {}

extension CommandGroup {
  /// Never reached: `TaskKeyMain` refuses a group without a subcommand
  /// before it would build one.
  init(_ arguments: ParsedArguments) {
    preconditionFailure("\(arguments.path) is a group of commands")
  }

  /// Never reached.
  func run(_ streams: StandardStreams) throws {}
}
