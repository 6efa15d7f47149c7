import CommandKit
import FoundationEssentials
import TaskVault
import TaskerCore

/// `tasker attach add|get|list|remove`: files attached to tasks and pages.
struct AttachCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "attach",
    abstract: "Attach files to tasks and pages; sealed when attachment encryption is on (off by default).",
    example: """
      tasker attach add --task 3 results.pdf
      tasker attach get 1 --out results.pdf
      """)
  static let subcommands: [any CommandDeclaration.Type] = [
    AttachAddCommand.self, AttachGetCommand.self, AttachListCommand.self, AttachRemoveCommand.self,
  ]

  static let task = OptionSpec.value("--task", "ID", .taskID, help: "The task it belongs to.")
  static let page = OptionSpec.value("--page", "ID", .pageID, help: "The page it belongs to.")

  /// `--task ID` or `--page ID`, at most one (the parser checked each is
  /// a record id: both are declared `.liveID`).
  static func owner(_ arguments: ParsedArguments) throws -> AttachmentOwner? {
    let task = arguments.recordID(Self.task)
    let page = arguments.recordID(Self.page)
    guard task == nil || page == nil else { throw arguments.usageError("give --task or --page, not both") }
    return task.map(AttachmentOwner.task) ?? page.map(AttachmentOwner.page)
  }
}

/// `tasker attach add FILE`.
struct AttachAddCommand: Command {
  static let name = OptionSpec.value("--name", "NAME", help: "The name to record (default: FILE's last component).")
  static let type = OptionSpec.value("--type", "MEDIA", help: "The media type (default: from the name's extension).")
  static let spec = CommandSpec(
    name: "add", abstract: "Copy a file (or standard input) into Tasker's attachments folder, streaming it.",
    arguments: [
      ArgumentSpec(name: "FILE", kind: .file, help: "The file to attach; '-' for standard input (with --name).")
    ],
    options: [AttachCommand.task, AttachCommand.page, name, type],
    json: JSONShape(fields: RecordJSON.attachmentFields, help: "the new attachment's row."),
    example: "tasker attach add --task 3 results.pdf")

  let owner: AttachmentOwner
  let source: String
  let recordName: String
  let mediaType: String
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    guard let owner = try AttachCommand.owner(arguments) else {
      throw arguments.usageError("attach add needs --task ID or --page ID")
    }
    self.owner = owner
    source = arguments.argument(0)!
    guard let chosen = arguments.value(Self.name) ?? (source == "-" ? nil : OutputFile.fileName(of: source)) else {
      throw arguments.usageError("reading standard input needs --name NAME")
    }
    recordName = chosen
    mediaType = arguments.value(Self.type) ?? MediaType.guess(for: chosen)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store()
    let record: AttachmentRecord
    if source == "-" {
      record = try store.addAttachment(to: owner, name: recordName, mediaType: mediaType) {
        try context.readInputChunk()
      }
    } else {
      guard FileManager.default.isReadableFile(atPath: source) else {
        throw CLIError.cannotRead(path: source, reason: "no such readable file")
      }
      record = try store.addAttachment(to: owner, copying: source, name: recordName, mediaType: mediaType)
    }
    if json { return try context.printJSON(RecordJSON.attachment(record)) }
    let name = TerminalText.visible(record.name)
    try context.print("Attached \(record.id): \(name) (\(record.byteCount) bytes\(record.sealed ? ", sealed" : ""))")
  }
}

/// `tasker attach get ID`.
struct AttachGetCommand: Command {
  static let out = OptionSpec.value(
    "--out", "FILE", .file,
    help: "Write to a new file instead of standard output; it appears only once the whole content is verified.")
  static let range = OptionSpec.value(
    "--range", "START-END",
    help: "Only bytes START to END (inclusive, counted from 0, as HTTP ranges), or START- to the end.")
  static let spec = CommandSpec(
    name: "get",
    abstract: "Write an attachment's content to standard output (or --out FILE), streaming it; one from another "
      + "device is fetched from the sync storage first (on a terminal, a line on standard error shows how far).",
    arguments: [ArgumentSpec(name: "ID", kind: .attachmentID, help: "The attachment's id.")], options: [out, range],
    example: """
      tasker attach get 1 --out results.pdf
      tasker attach get 1 --range 0-1023 | file -
      """)

  let id: Int64
  let output: String?
  let byteRange: AttachmentRange?

  init(_ arguments: ParsedArguments) throws {
    id = arguments.recordID(at: 0)!
    output = arguments.value(Self.out)
    do {
      byteRange = try arguments.value(Self.range).map(AttachmentRange.init(parsing:))
    } catch {
      throw arguments.usageError("--range: \(error)")
    }
  }

  func run(_ context: CommandContext) throws {
    // Read-only; an attachment from another device is first fetched from the sync storage (which
    // writes, through the sync engine's store), then read through that store like any other: the
    // read-only one is let go.
    var store = try context.reader()
    if try store.attachment(id: id).remote {
      let engine = try SyncCommand.engine(context)
      try SyncProgressLines.around(context.streams) { try engine.fetchAttachment(id: id, progress: $0) }
      store = try context.store()
    }
    switch (output, byteRange) {
    case (nil, nil): try store.readAttachment(id: id) { try context.write($0) }
    case (nil, let range?): _ = try store.readAttachment(id: id, range: range) { try context.write($0) }
    case (let path?, nil): try store.writeAttachment(id: id, toNewFile: path)
    case (let path?, let range?): _ = try store.writeAttachment(id: id, range: range, toNewFile: path)
    }
  }
}

/// `tasker attach list`.
struct AttachListCommand: Command {
  static let spec = CommandSpec(
    name: "list", abstract: "List attachments (names and sizes; needs no key).",
    options: [AttachCommand.task, AttachCommand.page],
    json: JSONShape(
      fields: ["attachments"],
      help: "attachments, each with \(RecordJSON.attachmentFields.joined(separator: ", ")) and remote (its "
        + "content still at the sync storage, fetched by 'attach get')."),
    example: "tasker attach list --task 3")

  let owner: AttachmentOwner?
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    owner = try AttachCommand.owner(arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let store = try context.readerIfPresent()
    let records = try store?.attachments(of: owner) ?? []
    if json {
      let rows = records.map { record -> JSONValue in
        guard case .object(var members) = RecordJSON.attachment(record) else { return .null }
        members["remote"] = .bool(record.remote)
        return .object(members)
      }
      return try context.printJSON(.object(["attachments": .array(rows)]))
    }
    for record in records {
      let state = record.remote ? "\tat the sync storage" : record.sealed ? "\tsealed" : ""
      try context.print(
        "\(record.id)\t\(record.owner.record)\t\(TerminalText.visible(record.name))\t\(record.byteCount) bytes\t"
          + TerminalText.visible(record.mediaType) + state)
    }
  }
}

/// `tasker attach remove ID`.
struct AttachRemoveCommand: Command {
  static let spec = CommandSpec(
    name: "remove", abstract: "Remove an attachment: its row and its file.",
    arguments: [ArgumentSpec(name: "ID", kind: .attachmentID, help: "The attachment's id.")],
    json: JSONShape(fields: RecordJSON.attachmentFields, help: "the row that was removed."),
    example: "tasker attach remove 1")

  let id: Int64
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    id = arguments.recordID(at: 0)!
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let record = try context.store().removeAttachment(id: id)
    if json { return try context.printJSON(RecordJSON.attachment(record)) }
    try context.print("Removed attachment \(record.id): \(TerminalText.visible(record.name))")
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
