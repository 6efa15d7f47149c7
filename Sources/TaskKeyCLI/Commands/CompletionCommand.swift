import AssistantKeys
import TaskVault

/// `taskkey completion bash|zsh|fish|man`: the reference files `make
/// install` puts in place, printed from the command declarations.
struct CompletionCommand: CommandGroup {
  static let spec = CommandSpec(
    name: "completion", abstract: "Print shell completion scripts (bash, zsh, fish) or the man page.",
    example: """
      # Enable completion in this bash (no bash-completion package needed):
      source <(taskkey completion bash)
      """)
  static let subcommands: [any Command.Type] = [
    CompletionScriptCommand<BashScript>.self, CompletionScriptCommand<ZshScript>.self,
    CompletionScriptCommand<FishScript>.self, CompletionScriptCommand<ManScript>.self, CompletionWordsCommand.self,
  ]
}

/// One generated reference file.
protocol ReferenceScript {
  static var name: String { get }
  static var abstract: String { get }
  static var example: String { get }
  static func text(_ nodes: [CommandNode]) -> String
}

/// bash.
enum BashScript: ReferenceScript {
  static let name = "bash"
  static let abstract = "The bash completion script (works without the bash-completion package)."
  static let example = "taskkey completion bash > ~/.local/share/bash-completion/completions/taskkey"
  static func text(_ nodes: [CommandNode]) -> String { BashDialect().script(nodes) }
}

/// zsh.
enum ZshScript: ReferenceScript {
  static let name = "zsh"
  static let abstract = "The zsh completion function (_taskkey)."
  static let example = "taskkey completion zsh > ~/.zfunc/_taskkey"
  static func text(_ nodes: [CommandNode]) -> String { ZshDialect().script(nodes) }
}

/// fish.
enum FishScript: ReferenceScript {
  static let name = "fish"
  static let abstract = "The fish completion script."
  static let example = "taskkey completion fish > ~/.config/fish/completions/taskkey.fish"
  static func text(_ nodes: [CommandNode]) -> String { FishCompletion.script(nodes) }
}

/// man.
enum ManScript: ReferenceScript {
  static let name = "man"
  static let abstract = "The taskkey(1) man page in man(7) format."
  static let example = "taskkey completion man > ~/.local/share/man/man1/taskkey.1"
  static func text(_ nodes: [CommandNode]) -> String { ManPage.render(nodes, version: TaskKeyMain.version) }
}

/// `taskkey completion bash` and its siblings.
struct CompletionScriptCommand<Script: ReferenceScript>: Command {
  static var spec: CommandSpec {
    CommandSpec(name: Script.name, abstract: Script.abstract, example: Script.example)
  }

  init(_ arguments: ParsedArguments) {}

  func run(_ streams: StandardStreams) throws {
    try streams.write(Array(Script.text(CommandNode.all()).utf8))
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
