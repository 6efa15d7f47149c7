import CommandKit
import TaskerCore
import TaskerSync

/// `tasker conflicts`: note and page texts written on two devices without
/// either seeing the other's.
struct ConflictsCommand: Command {
  static let spec = CommandSpec(
    name: "conflicts", abstract: "List the notes and page bodies that two devices changed at once; nothing is lost.",
    json: JSONShape(
      fields: ["conflicts"],
      help: "each with kind, id (the local id, null for a deleted record), uid, title and texts (number, version, "
        + "text)."),
    discussion: "Text 1 is the one shown now (for a deleted record, there is none shown: every text is listed). "
      + "'tasker resolve' keeps one. Needs the vault unlocked: the texts are sealed.",
    example: "tasker conflicts")

  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let conflicts = try SyncEngine.conflicts(in: try context.store(create: true))
    if json {
      return try context.printJSON([
        "conflicts": .array(
          conflicts.map { conflict in
            [
              "kind": .string(conflict.kind.rawValue), "id": .optional(conflict.localID.map { String($0) }),
              "uid": .string(conflict.id), "title": .optional(conflict.title),
              "texts": .array(
                conflict.texts.enumerated().map { index, text in
                  ["number": .int(index + 1), "version": .string(text.version), "text": .string(text.text)]
                }),
            ]
          })
      ])
    }
    if conflicts.isEmpty { return context.note("no conflicts") }
    for conflict in conflicts {
      let name =
        conflict.localID.map { "\(conflict.kind.rawValue) \($0)" } ?? "deleted \(conflict.kind.rawValue) \(conflict.id)"
      try context.print("\(name): \(conflict.title ?? "(no title)")")
      for (index, text) in conflict.texts.enumerated() {
        try context.print("  text \(index + 1):")
        for line in text.text.split(separator: "\n", omittingEmptySubsequences: false) {
          try context.print("    " + line)
        }
      }
    }
  }
}

/// `tasker resolve task|page ID [--keep N]`.
struct ResolveCommand: Command {
  static let keep = OptionSpec.value(
    "--keep", "N", .number, help: "The number of the text to keep, as 'tasker conflicts' lists them (default 1).")
  static let spec = CommandSpec(
    name: "resolve", abstract: "Keep one text of a conflict; the others are dropped on every device at its next sync.",
    arguments: [
      ArgumentSpec(name: "KIND", kind: .choice(["task", "page"]), help: "task or page."),
      ArgumentSpec(name: "ID", kind: .text, help: "The local id, or the uid of a deleted record."),
    ],
    options: [keep], json: JSONShape(fields: ["kind", "id"], help: "the record that now holds the kept text."),
    discussion: "For a deleted record the kept text comes back as a new task or page with the deleted one's "
      + "fields. Needs sync set up and the vault unlocked; the choice is sent at the next 'tasker sync now'.",
    example: "tasker resolve task 12 --keep 2")

  let kind: SyncRecord.Kind
  let id: String
  let keepNumber: Int
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    kind = SyncRecord.Kind(rawValue: arguments.argument(0)!) ?? .task
    id = arguments.argument(1)!
    keepNumber = arguments.value(Self.keep).flatMap { Int($0) } ?? 1
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let engine = try SyncCommand.engine(context)
    let localID = Int64(id).flatMap { $0 > 0 ? $0 : nil }
    let row = try engine.resolve(kind: kind, localID: localID, id: localID == nil ? id : nil, keep: keepNumber)
    if json { return try context.printJSON(["kind": .string(kind.rawValue), "id": .string(String(row))]) }
    try context.print("resolved: \(kind.rawValue) \(row) keeps text \(keepNumber); run 'tasker sync now' to send it")
  }
}
