import AssistantKeys
import CommandKit
import TaskVault

/// `taskkey completion bash|zsh|fish|man`: the reference files `make
/// install` puts in place, printed from the command declarations.
struct CompletionCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "completion", abstract: "Print shell completion scripts (bash, zsh, fish) or the man page.",
    example: """
      # Enable completion in this bash (no bash-completion package needed):
      source <(taskkey completion bash)
      """)
  static let subcommands: [any CommandDeclaration.Type] = [
    CompletionScriptCommand<BashReference>.self, CompletionScriptCommand<ZshReference>.self,
    CompletionScriptCommand<FishReference>.self, CompletionScriptCommand<ManReference>.self,
    CompletionWordsCommand.self,
  ]
}

/// `taskkey completion bash` and its siblings: CommandKit prints them from
/// `TaskKeyMain.program`.
struct CompletionScriptCommand<Script: ReferenceFileChoice>: Command {
  static var spec: CommandSpec { Script.file.spec(for: TaskKeyMain.program) }

  init(_ arguments: ParsedArguments) {}

  func run(_ streams: StandardStreams) throws {
    try streams.write(Array(Script.file.text(for: TaskKeyMain.program).utf8))
  }
}

/// `taskkey completion words SOURCE`: what the completion scripts offer
/// for ids and names. Reads only an unlocked vault: never prompts, never
/// runs the KDF, prints nothing (exit 0) when locked or absent.
struct CompletionWordsCommand: Command {
  static let spec = CommandSpec(
    name: "words", abstract: "Print note key ids, assistant names or ids, or item names, one per line, for completion.",
    arguments: [
      ArgumentSpec(
        name: "SOURCE", kind: .choice(CompletionSource.allCases.map(\.rawValue)),
        help: "note-key-ids, assistant-names, assistant-key-ids or item-names.")
    ],
    discussion: "Prints nothing when the vault is locked or absent; never asks for a passphrase.",
    example: """
      taskkey completion words note-key-ids
      """)

  let source: CompletionSource

  init(_ arguments: ParsedArguments) {
    source = CompletionSource(rawValue: arguments.argument(0)!)!
  }

  func run(_ streams: StandardStreams) throws {
    var quiet = streams
    quiet.verbosity = .quiet
    guard let directory = Vault.defaultDirectory(environment: streams.environment),
      let vault = try? Vault(at: directory),
      case .unlocked = try? vault.status().lockState
    else { return }
    let words: [String]
    switch source {
    case .noteKeyIDs: words = (try? vault.noteKeyring().ids.map(\.hex)) ?? []
    case .itemNames:
      let reserved = AssistantKeyRegistry.reservedItemPrefix
      words = ((try? vault.items()) ?? []).map(\.name).filter { !$0.hasPrefix(reserved) }
    case .assistantNames, .assistantKeyIDs:
      let records = (try? AssistantKeyRegistry(vault: vault).keys()) ?? []
      let current = records.filter { $0.status.word == "active" || $0.status.word == "overlapping" }
      words = source == .assistantNames ? Array(Set(current.map(\.name))).sorted() : current.map(\.id.text)
    }
    for word in words { try quiet.print(word) }
  }
}
