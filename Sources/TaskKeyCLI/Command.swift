import CommandKit

/// One `taskkey` command: its declaration (CommandKit's
/// `CommandDeclaration`: the parser, help, man page and completions read
/// it), the values read from it, and what it does. `init` validates; `run`
/// acts.
protocol Command: CommandDeclaration {
  /// Reads and validates the parsed command line.
  init(_ arguments: ParsedArguments) throws
  /// Does the work, writing only through `streams`.
  func run(_ streams: StandardStreams) throws
}

/// A command that only groups others (`item`, `sync`, `backup`): it never
/// runs by itself.
protocol CommandGroup: Command {}

extension CommandGroup {
  /// Never reached: the kit refuses a group without a subcommand before it
  /// would build one.
  init(_ arguments: ParsedArguments) {
    preconditionFailure("\(arguments.path) is a group of commands")
  }

  /// Never reached.
  func run(_ streams: StandardStreams) throws {}
}

extension ValueKind {
  /// A note key id from the unlocked vault.
  static let noteKeyID = ValueKind.live(CompletionSource.noteKeyIDs.rawValue)
  /// An assistant name from the unlocked vault's registry.
  static let assistantName = ValueKind.live(CompletionSource.assistantNames.rawValue)
  /// An assistant key id (`tkid_…`) from the unlocked vault's registry.
  static let assistantKeyID = ValueKind.live(CompletionSource.assistantKeyIDs.rawValue)
  /// A vault item name from the unlocked vault.
  static let itemName = ValueKind.live(CompletionSource.itemNames.rawValue)
}

/// The dynamic values the completions ask `taskkey completion words` for.
enum CompletionSource: String, CaseIterable {
  case noteKeyIDs = "note-key-ids"
  case assistantNames = "assistant-names"
  case assistantKeyIDs = "assistant-key-ids"
  case itemNames = "item-names"
}
