import CommandKit
import TaskerCore

/// `tasker completion bash|zsh|fish|man|words`: the reference files `make
/// app-install` puts in place, printed by CommandKit from the declarations,
/// and the live ids the completions offer.
struct CompletionCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "completion", abstract: "Print shell completion scripts (bash, zsh, fish) or the man page.",
    example: """
      # Enable completion in this bash (no bash-completion package needed):
      source <(tasker completion bash)
      """)
  static let subcommands: [any CommandDeclaration.Type] = [
    TaskerReference<BashReference>.self, TaskerReference<ZshReference>.self, TaskerReference<FishReference>.self,
    TaskerReference<ManReference>.self, CompletionWordsCommand.self,
  ]
}

/// `tasker completion bash` and its siblings.
struct TaskerReference<File: ReferenceFileChoice>: Command {
  static var spec: CommandSpec { File.file.spec(for: TaskerMain.program) }

  init(_ arguments: ParsedArguments) {}

  func run(_ context: CommandContext) throws {
    try context.write(Array(File.file.text(for: TaskerMain.program).utf8))
  }
}

/// The live values the completions ask `tasker completion words` for.
enum CompletionWord: String, CaseIterable {
  case taskIDs = "task-ids"
  case pageIDs = "page-ids"
  case attachmentIDs = "attachment-ids"
  case approvalIDs = "approval-ids"
  case receiptIDs = "receipt-ids"
}

/// `tasker completion words SOURCE`: ids for the completion scripts. Reads
/// the database read-only and no note: prints nothing (exit 0) when there
/// is none or it cannot be read, and never asks for anything.
struct CompletionWordsCommand: Command {
  static let spec = CommandSpec(
    name: "words", abstract: "Print task, page, attachment, approval or receipt ids, one per line, for completion.",
    arguments: [
      ArgumentSpec(
        name: "SOURCE", kind: .choice(CompletionWord.allCases.map(\.rawValue)),
        help: "task-ids, page-ids, attachment-ids, approval-ids or receipt-ids.")
    ],
    discussion: "Prints nothing when there is no database or it cannot be read; never needs the vault.",
    example: "tasker completion words task-ids")

  let source: CompletionWord

  init(_ arguments: ParsedArguments) {
    source = CompletionWord(rawValue: arguments.argument(0)!)!
  }

  func run(_ context: CommandContext) throws {
    guard let store = try? context.readerIfPresent() else { return }
    let words: [String]
    switch source {
    case .taskIDs: words = ((try? store.tasks(.open)) ?? []).map { String($0.id) }
    case .pageIDs: words = ((try? store.pages()) ?? []).map { String($0.id) }
    case .attachmentIDs: words = ((try? store.attachments()) ?? []).map { String($0.id) }
    case .approvalIDs: words = ((try? store.approvals(pendingOnly: true)) ?? []).map { String($0.id) }
    case .receiptIDs: words = ((try? store.receipts(limit: 50)) ?? []).map { "r\($0.id)" }
    }
    if !words.isEmpty { try context.print(words.joined(separator: "\n")) }
  }
}
