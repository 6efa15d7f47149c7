import CommandKit
import TaskerCore

/// `tasker page new|show|edit|list`: pages with sealed bodies.
struct PageCommand: Command {
  static let name = "page"
  static let abstract = "Pages: a plain title and a body sealed before it is written."
  static let usage = """
    tasker page new TITLE [--body - | --body-file F] [--json]
           tasker page show ID [--json]
           tasker page edit ID [--title T] [--body - | --body-file F | --body-in-editor] [--json]
           tasker page list [--json]
    """
  static let options = """
    SUBCOMMANDS:
      new TITLE         Add a page.
      show ID           Show a page with its body opened.
      edit ID           Change the title, the body or both.
      list              List pages (titles only; needs no key).

    OPTIONS:
      --title T         (edit) A new title.
    \(BodySource.help("body", what: "body", editor: true))
                        --body-in-editor is for 'page edit'.
      --json            Print JSON.
      -h, --help        Show this help.
    """

  enum Action {
    case new(title: String)
    case show(Int64)
    case edit(Int64)
    case list
  }

  let action: Action
  let title: String?
  let body: BodySource?
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    title = try arguments.option("--title")
    body = try BodySource.parse("body", editor: true, from: &arguments)
    json = try arguments.flag("--json")
    let words = try arguments.positionals()
    switch (words.first, words.count) {
    case ("new", 2): action = .new(title: words[1])
    case ("show", 2): action = .show(try arguments.id(words[1]))
    case ("edit", 2): action = .edit(try arguments.id(words[1]))
    case ("list", 1): action = .list
    default: throw arguments.usageError("expected 'page new TITLE', 'page show ID', 'page edit ID' or 'page list'")
    }
    switch action {
    case .new:
      if title != nil { throw arguments.usageError("--title is for 'page edit'") }
      if body == .editor { throw arguments.usageError("--body-in-editor is for 'page edit'") }
    case .show, .list:
      if title != nil || body != nil {
        throw arguments.usageError("--title and --body are for 'page new' and 'page edit'")
      }
    case .edit:
      if title == nil && body == nil { throw arguments.usageError("nothing to change: give --title or --body") }
    }
  }

  func run(_ context: CommandContext) throws {
    switch action {
    case .new(let title):
      let page = try context.store(create: true).addPage(title: title, body: try context.body(body) ?? "")
      if json { return try context.output.json(page) }
      try context.output.print("Added page \(page.id): \(TerminalText.visible(page.title))")
    case .show(let id):
      let page = try context.reader().page(id: id)
      if json { return try context.output.json(page) }
      let body = page.body.isEmpty ? "" : "\n\n" + TerminalText.visible(page.body, keepingLines: true)
      try context.output.print("Page \(page.id): \(TerminalText.visible(page.title))" + body)
    case .edit(let id):
      let text = try context.body(body) { try context.store().page(id: id).body }
      let page = try context.store().editPage(id: id, title: title, body: text)
      if json { return try context.output.json(page) }
      try context.output.print("Changed page \(page.id): \(TerminalText.visible(page.title))")
    case .list:
      let pages = try context.reader().pages()
      if json { return try context.output.json(pages) }
      if !pages.isEmpty {
        try context.output.print(pages.map { "\($0.id)\t\(TerminalText.visible($0.title))" }.joined(separator: "\n"))
      }
    }
  }
}
