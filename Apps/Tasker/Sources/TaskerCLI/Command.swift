import CommandKit
import TaskSystem
import TaskerCore

/// One `tasker` command: CommandKit's `RunnableCommand` run with a
/// `CommandContext` (its streams, environment and store). Groups (`page`,
/// `attach`, `approvals`, `gate`, `completion`) also conform to
/// CommandKit's `CommandGroup`.
protocol Command: RunnableCommand where Context == CommandContext {}

extension ValueKind {
  /// A task id from the user's database.
  static let taskID = ValueKind.liveID(CompletionWord.taskIDs.rawValue)
  /// A page id from the user's database.
  static let pageID = ValueKind.liveID(CompletionWord.pageIDs.rawValue)
  /// An attachment id from the user's database.
  static let attachmentID = ValueKind.liveID(CompletionWord.attachmentIDs.rawValue)
  /// A pending approval's id.
  static let approvalID = ValueKind.liveID(CompletionWord.approvalIDs.rawValue)
  /// A receipt's id.
  static let receiptID = ValueKind.live(CompletionWord.receiptIDs.rawValue)
}

extension ArgumentSpec {
  /// `ID`: a task's id.
  static let taskID = ArgumentSpec(name: "ID", kind: .taskID, help: "The task's id.")
  /// `ID`: a page's id.
  static let pageID = ArgumentSpec(name: "ID", kind: .pageID, help: "The page's id.")
}

/// What a command runs with: the standard streams (CommandKit's, the one
/// output type of the project), the environment and the store.
final class CommandContext {
  /// The streams.
  let streams: StandardStreams
  private var opened: TaskStore?
  /// Whether `opened` came from `reader()` (read-only).
  private var openedReadOnly = false

  init(streams: StandardStreams) {
    self.streams = streams
  }

  /// The environment the command reads.
  var environment: [String: String] { streams.environment }

  /// Tasker's home for this environment.
  ///
  /// - Throws: `UsageError` when neither `TASKER_HOME` nor `HOME` is set.
  func home() throws -> TaskerHome {
    guard let home = TaskerHome(environment: environment) else {
      throw UsageError(message: "cannot find Tasker's home", usage: "set TASKER_HOME or HOME")
    }
    return home
  }

  /// The store, opened once for reading and writing; created when
  /// `create` is true. After `reader()`, a store for writing is opened
  /// then (`attach get` reads first and writes only to fetch a remote
  /// attachment).
  func store(create: Bool = false) throws -> TaskStore {
    if let opened, !openedReadOnly { return opened }
    let store = try TaskStore(home: home(), keys: VaultKeySource(environment: environment), create: create)
    (opened, openedReadOnly) = (store, false)
    return store
  }

  /// The store for a command that only reads (`show`, `list`, `page show`,
  /// `page list`, `plan-context`, `attach get|list`): opened read-only, so
  /// it takes no write lock and does no migration work when the schema is
  /// current. Never create through it; a change fails with a SQLite error.
  func reader() throws -> TaskStore {
    if let opened { return opened }
    let store = try TaskStore.reading(home: home(), keys: VaultKeySource(environment: environment))
    (opened, openedReadOnly) = (store, true)
    return store
  }

  /// The store for a listing, or nil on a new home with no database yet
  /// (an empty list, exit 0); unsafe permissions are still refused.
  func readerIfPresent() throws -> TaskStore? {
    if let opened { return opened }
    let store = try TaskStore.readingIfPresent(home: home(), keys: VaultKeySource(environment: environment))
    (opened, openedReadOnly) = (store, true)
    return store
  }

  /// Writes a line of program text and user text, every control character
  /// but newline and tab made visible (`TerminalText`): the net under every
  /// plain printer, so nothing stored or typed reaches the terminal raw.
  /// Fields inside a line are made visible whole by the printer before.
  func print(_ text: String) throws {
    try streams.printVisible(text)
  }

  /// Writes bytes to standard output as they are (attachments).
  func write(_ bytes: [UInt8]) throws {
    try streams.write(bytes)
  }

  /// Writes one JSON object (docs/json-output.md).
  func printJSON(_ value: JSONValue) throws {
    try streams.printJSON(value)
  }

  /// The next bytes of standard input, up to 1 MiB; empty at the end.
  func readInputChunk() throws -> [UInt8] {
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    do {
      let count = try chunk.withUnsafeMutableBytes { try streams.readInput($0) }
      chunk.removeSubrange(count...)
      return chunk
    } catch {
      throw CLIError.cannotRead(path: "standard input", reason: "\(error)")
    }
  }

  /// Writes a line to standard error (control characters made visible).
  func printError(_ text: String) {
    streams.printError(text)
  }

  /// A note on standard error, left out with `-q`.
  func note(_ text: String) {
    streams.note(text)
  }

  /// Warns on standard error when the command's last checkpoint found
  /// another process reading and left the database's log in place (the
  /// change itself is committed): earlier versions of the changed pages
  /// stay in `tasker.db` or `tasker.db-wal` until a later checkpoint.
  func warnIfLogKept() {
    guard let opened, opened.logKeptByReader else { return }
    printError(
      "tasker: warning: another process is reading the database, so earlier versions of the changed pages "
        + "(old note text, or bodies under an older key) remain in tasker.db or tasker.db-wal; the change itself is saved"
    )
    printError("hint: stop the other Tasker process (such as 'tasker mcp') and run the command again to clear the log")
  }

  /// The text a body option names (standard input, a file, or the
  /// editor opened on `current`), checked as UTF-8; nil when none was given.
  ///
  /// - Throws: `CLIError.invalidUTF8`, `InputTooLarge`, `.cannotRead`,
  ///   `.editorFailed`, and `current`'s errors.
  func body(_ source: BodySource?, current: () throws -> String = { "" }) throws -> String? {
    guard let source else { return nil }
    switch source {
    case .standardInput:
      return try BodySource.text(try streams.readAll(limit: TaskerMain.inputLimit), from: "standard input")
    case .file(let path): return try BodySource.text(try BodySource.read(path), from: path)
    case .editor: return try BodyEditor(environment: environment).edit(try current())
    }
  }
}
