/// One `taskkey` subcommand: its help text, its parsed configuration and
/// what it does. `init(parsing:)` validates; `run` acts.
protocol Command {
  /// The word that selects the command.
  static var name: String { get }
  /// One sentence for the command list.
  static var abstract: String { get }
  /// The usage line without the leading `usage: `.
  static var usage: String { get }
  /// The ARGUMENTS and OPTIONS sections, already formatted.
  static var options: String { get }
  /// One example invocation with a comment.
  static var example: String { get }

  /// Parses and validates the command's arguments.
  init(parsing arguments: inout Arguments) throws
  /// Does the work.
  func run(_ streams: StandardStreams) throws
}

extension Command {
  /// The full `--help` text in the familiar shape.
  static var help: String {
    """
    OVERVIEW: \(abstract)

    USAGE: \(usage)

    \(options)

    EXAMPLE:
    \(example)
    """
  }
}
