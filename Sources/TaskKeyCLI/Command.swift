import CommandKit

/// One `taskkey` command: CommandKit's `RunnableCommand` run with the
/// process's `StandardStreams`. Groups (`item`, `sync`, `backup`) also
/// conform to CommandKit's `CommandGroup`.
protocol Command: RunnableCommand where Context == StandardStreams {}

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
