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
