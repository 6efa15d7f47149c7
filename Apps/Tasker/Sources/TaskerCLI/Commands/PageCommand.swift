import CommandKit
import TaskerCore

/// `tasker page new|show|edit|list|delete`: pages with sealed bodies.
struct PageCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "page", abstract: "Pages: a plain title and a body sealed before it is written.",
    example: """
      printf 'Agenda\\n' | tasker page new 'Monday meeting' --body -
      tasker page list
      """)
  static let subcommands: [any CommandDeclaration.Type] = [
    PageNewCommand.self, PageShowCommand.self, PageEditCommand.self, PageListCommand.self, PageDeleteCommand.self,
  ]
}

/// `tasker page new TITLE`.
struct PageNewCommand: Command {
  static let spec = CommandSpec(
    name: "new", abstract: "Add a page; its body is sealed before it is written.",
    arguments: [ArgumentSpec(name: "TITLE", kind: .text, help: "The page's title (stored plain).")],
    options: BodySource.options("body", what: "body", editor: false),
    json: JSONShape(fields: RecordJSON.pageDetailFields, help: "the new page."),
    example: "printf 'Agenda\\n' | tasker page new 'Monday meeting' --body -")

  let title: String
  let body: BodySource?
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    title = arguments.argument(0)!
    body = try BodySource.parse("body", editor: false, from: arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let page = try context.store(create: true).addPage(title: title, body: try context.body(body) ?? "")
    if json { return try context.printJSON(RecordJSON.page(page)) }
    try context.print("Added page \(page.id): \(TerminalText.visible(page.title))")
  }
}

/// `tasker page show ID`.
struct PageShowCommand: Command {
  static let spec = CommandSpec(
    name: "show", abstract: "Show a page with its body opened.", arguments: [.pageID],
    json: JSONShape(fields: RecordJSON.pageDetailFields, help: "the page with its body."),
    example: "tasker page show 2")

  let id: Int64
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    id = arguments.recordID(at: 0)!
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let page = try context.reader().page(id: id)
    if json { return try context.printJSON(RecordJSON.page(page)) }
    let body = page.body.isEmpty ? "" : "\n\n" + TerminalText.visible(page.body, keepingLines: true)
    try context.print("Page \(page.id): \(TerminalText.visible(page.title))" + body)
  }
}

/// `tasker page edit ID`.
struct PageEditCommand: Command {
  static let title = OptionSpec.value("--title", "T", help: "A new title.")
  static let spec = CommandSpec(
    name: "edit", abstract: "Change a page's title, its body or both.", arguments: [.pageID],
    options: [title] + BodySource.options("body", what: "body", editor: true),
    json: JSONShape(fields: RecordJSON.pageDetailFields, help: "the page after the change."),
    example: "tasker page edit 2 --body-in-editor")

  let id: Int64
  let title: String?
  let body: BodySource?
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    id = arguments.recordID(at: 0)!
    title = arguments.value(Self.title)
    body = try BodySource.parse("body", editor: true, from: arguments)
    json = arguments.flag(CommandSpec.jsonOption)
    if title == nil && body == nil { throw arguments.usageError("nothing to change: give --title or a body option") }
  }

  func run(_ context: CommandContext) throws {
    let text = try context.body(body) { try context.store().page(id: id).body }
    let page = try context.store().editPage(id: id, title: title, body: text)
    if json { return try context.printJSON(RecordJSON.page(page)) }
    try context.print("Changed page \(page.id): \(TerminalText.visible(page.title))")
  }
}

/// `tasker page list`.
struct PageListCommand: Command {
  static let spec = CommandSpec(
    name: "list", abstract: "List pages (titles only; needs no key).",
    json: JSONShape(fields: ["pages"], help: "pages, each with \(RecordJSON.pageFields.joined(separator: ", "))."),
    example: "tasker page list --json")

  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let pages = try context.readerIfPresent()?.pages() ?? []
    if json { return try context.printJSON(.object(["pages": .array(pages.map(RecordJSON.page))])) }
    if !pages.isEmpty {
      try context.print(pages.map { "\($0.id)\t\(TerminalText.visible($0.title))" }.joined(separator: "\n"))
    }
  }
}

/// `tasker page delete ID`.
struct PageDeleteCommand: Command {
  static let spec = CommandSpec(
    name: "delete", abstract: "Delete a page, its sealed body and its attachments ('tasker undo rN' restores them).",
    arguments: [.pageID],
    json: JSONShape(fields: ["deleted", "receipt"], help: "the page's id and the receipt that undoes the delete."),
    example: "tasker page delete 2")

  let id: Int64
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    id = arguments.recordID(at: 0)!
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let receipt = try context.store().deletePage(id: id, keepingCopyAs: .user)
    if json {
      return try context.printJSON(.object(["deleted": RecordJSON.id(id), "receipt": .string("r\(receipt.id)")]))
    }
    try context.print("Deleted page \(id) (undo: tasker undo r\(receipt.id)).")
  }
}
