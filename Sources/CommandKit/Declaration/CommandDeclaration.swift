/// A command as the kit sees it: its declaration and the commands under
/// it. A program's own command protocol refines this one with what it runs
/// with (`init` from `ParsedArguments`, `run` with its context), so the
/// parser, help, man page and completions read the same declaration as the
/// code that runs.
public protocol CommandDeclaration {
  /// The command line it takes.
  static var spec: CommandSpec { get }
  /// The commands under this one (`item set`, `page add`); empty for a
  /// command that runs by itself.
  static var subcommands: [any CommandDeclaration.Type] { get }
}

extension CommandDeclaration {
  /// No subcommands unless a command declares some.
  public static var subcommands: [any CommandDeclaration.Type] { [] }
}

/// A command that runs: what a program's own command protocol refines,
/// fixing `Context` to what its commands run with (`taskkey`'s
/// `StandardStreams`, `tasker`'s `CommandContext`). `init` reads and
/// validates the parsed line before anything is opened; `run` acts.
public protocol RunnableCommand: CommandDeclaration {
  /// What the command runs with.
  associatedtype Context
  /// Reads and validates the parsed command line.
  init(_ arguments: ParsedArguments) throws
  /// Does the work.
  func run(_ context: Context) throws
}

/// A command that only groups others (`item`, `page`, `attach`): the kit
/// refuses it without a subcommand, so it is never built or run.
public protocol CommandGroup: RunnableCommand {}

extension CommandGroup {
  /// Never reached: the kit refuses a group without a subcommand first.
  public init(_ arguments: ParsedArguments) {
    preconditionFailure("\(arguments.path) is a group of commands")
  }

  /// Never reached.
  public func run(_ context: Context) throws {}
}

/// One command of a program with the words that reach it: what the man
/// page and the shell completions walk, so they cover exactly what the
/// parser accepts.
public struct CommandNode {
  /// The command.
  public let command: any CommandDeclaration.Type
  /// The program's name: `taskkey`.
  public let program: String
  /// The words after the program's name: `["item", "set"]`.
  public let words: [String]

  /// `taskkey item set`.
  public var path: String { ([program] + words).joined(separator: " ") }
}
