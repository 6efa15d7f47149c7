import CommandKit
import FoundationEssentials
import TaskerCore

/// `tasker attach add|get|list`: files attached to tasks and pages.
struct AttachCommand: Command {
  static let name = "attach"
  static let abstract = "Attach files to tasks and pages; sealed when attachment encryption is on (off by default)."
  static let usage = """
    tasker attach add (--task ID | --page ID) FILE [--name NAME] [--type MEDIA] [--json]
           tasker attach get ID [--out FILE]
           tasker attach list [--task ID | --page ID] [--json]
    """
  static let options = """
    SUBCOMMANDS:
      add FILE          Copy FILE ('-' for standard input, with --name) into
                        Tasker's attachments folder, streaming it.
      get ID            Write the attachment's content to standard output (or
                        --out FILE), streaming it.
      list              List attachments (names and sizes; needs no key).

    OPTIONS:
      --task ID         The task it belongs to.
      --page ID         The page it belongs to.
      --name NAME       The name to record (default: FILE's last component).
      --type MEDIA      The media type (default: from the name's extension).
      --out FILE        (get) Write to a new file instead of standard output;
                        it appears only once the whole content is verified.
      --json            Print JSON.
      -h, --help        Show this help.
    """

  enum Action {
    case add(owner: AttachmentOwner, source: String, name: String, mediaType: String)
    case get(id: Int64, out: String?)
    case list(owner: AttachmentOwner?)
  }

  let action: Action
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    let task = try arguments.option("--task")
    let page = try arguments.option("--page")
    let name = try arguments.option("--name")
    let type = try arguments.option("--type")
    let out = try arguments.option("--out")
    json = try arguments.flag("--json")
    let words = try arguments.positionals()
    guard task == nil || page == nil else { throw arguments.usageError("give --task or --page, not both") }
    let owner = try task.map { AttachmentOwner.task(try arguments.id($0)) } ?? page.map { .page(try arguments.id($0)) }
    switch (words.first, words.count) {
    case ("add", 2):
      guard let owner else { throw arguments.usageError("attach add needs --task ID or --page ID") }
      let source = words[1]
      guard let chosen = name ?? (source == "-" ? nil : OutputFile.fileName(of: source)) else {
        throw arguments.usageError("reading standard input needs --name NAME")
      }
      action = .add(owner: owner, source: source, name: chosen, mediaType: type ?? MediaType.guess(for: chosen))
    case ("get", 2):
      action = .get(id: try arguments.id(words[1]), out: out)
    case ("list", 1):
      action = .list(owner: owner)
    default:
      throw arguments.usageError("expected 'attach add FILE', 'attach get ID' or 'attach list'")
    }
    if out != nil {
      guard case .get = action else { throw arguments.usageError("--out is for 'attach get'") }
    }
  }

  func run(_ context: CommandContext) throws {
    switch action {
    case .add(let owner, let source, let name, let mediaType):
      let store = try context.store()
      let record: AttachmentRecord
      if source == "-" {
        record = try store.addAttachment(to: owner, name: name, mediaType: mediaType) {
          try TaskerMain.readStandardInputChunk()
        }
      } else {
        guard FileManager.default.isReadableFile(atPath: source) else {
          throw CLIError.cannotRead(path: source, reason: "no such readable file")
        }
        record = try store.addAttachment(to: owner, copying: source, name: name, mediaType: mediaType)
      }
      if json { return try context.output.json(record) }
      let name = TerminalText.visible(record.name)
      try context.output.print(
        "Attached \(record.id): \(name) (\(record.byteCount) bytes\(record.sealed ? ", sealed" : ""))")
    case .get(let id, let out):
      let store = try context.reader()
      _ = try store.attachment(id: id)
      guard let out else { return try store.readAttachment(id: id) { try context.output.write($0) } }
      try store.writeAttachment(id: id, toNewFile: out)
    case .list(let owner):
      let records = try context.reader().attachments(of: owner)
      if json { return try context.output.json(records) }
      for record in records {
        try context.output.print(
          "\(record.id)\t\(record.owner.record)\t\(TerminalText.visible(record.name))\t\(record.byteCount) bytes\t"
            + TerminalText.visible(record.mediaType)
            + (record.sealed ? "\tsealed" : ""))
      }
    }
  }
}

/// A few common media types by file extension.
enum MediaType {
  static let table: [String: String] = [
    "pdf": "application/pdf", "txt": "text/plain", "md": "text/markdown", "png": "image/png",
    "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "json": "application/json",
    "csv": "text/csv", "html": "text/html", "zip": "application/zip",
  ]

  static func guess(for name: String) -> String {
    table[OutputFile.fileExtension(of: name).lowercased()] ?? "application/octet-stream"
  }
}

/// File names of `attach add` and `attach get --out`.
enum OutputFile {
  /// The last component of `path` (trailing slashes ignored), as a default
  /// attachment name.
  static func fileName(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
    guard let slash = trimmed.lastIndex(of: "/"), trimmed.count > 1 else { return String(trimmed) }
    return String(trimmed[trimmed.index(after: slash)...])
  }

  /// The extension of `name`'s last component, without the dot; empty when
  /// there is none (or the name only starts with a dot).
  static func fileExtension(of name: String) -> String {
    let last = fileName(of: name)
    guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return "" }
    return String(last[last.index(after: dot)...])
  }
}
