import CommandKit
import FoundationEssentials
import TaskSystem
import TaskerCore

/// One `tasker` subcommand: its help, its parsing, then its run.
protocol Command {
  /// The word that selects it.
  static var name: String { get }
  /// One line for the command list.
  static var abstract: String { get }
  /// The usage line(s).
  static var usage: String { get }
  /// The ARGUMENTS and OPTIONS sections of its help.
  static var options: String { get }
  /// Reads its configuration; every bad argument is a usage error here,
  /// before anything is opened.
  init(parsing arguments: inout Arguments) throws
  /// Does the work.
  func run(_ context: CommandContext) throws
}

extension Command {
  /// The full help text.
  static var help: String {
    """
    OVERVIEW: \(abstract)

    USAGE: \(usage)

    \(options)
    """
  }
}

/// What a command runs with: its streams, its environment and the store.
final class CommandContext {
  let output: OutputStream
  let environment: [String: String]
  let input: () throws -> [UInt8]
  private var opened: TaskStore?

  init(output: OutputStream, environment: [String: String], input: @escaping () throws -> [UInt8]) {
    self.output = output
    self.environment = environment
    self.input = input
  }

  /// Tasker's home for this environment.
  func home() throws -> TaskerHome {
    guard let home = TaskerHome(environment: environment) else {
      throw CLIError.usage(message: "cannot find Tasker's home", usage: "set TASKER_HOME or HOME")
    }
    return home
  }

  /// The store, opened once; created when `create` is true.
  func store(create: Bool = false) throws -> TaskStore {
    if let opened { return opened }
    let store = try TaskStore(home: home(), keys: VaultKeySource(environment: environment), create: create)
    opened = store
    return store
  }

  /// The store for a command that only reads (`show`, `list`, `page show`,
  /// `page list`, `plan-context`, `attach get|list`): opened read-only, so
  /// it takes no write lock and does no migration work when the schema is
  /// current. Never create through it; a change fails with a SQLite error.
  func reader() throws -> TaskStore {
    if let opened { return opened }
    let store = try TaskStore.reading(home: home(), keys: VaultKeySource(environment: environment))
    opened = store
    return store
  }

  /// Warns on standard error when the command's last checkpoint found
  /// another process reading and left the database's log in place (the
  /// change itself is committed): earlier versions of the changed pages
  /// stay in `tasker.db` or `tasker.db-wal` until a later checkpoint.
  func warnIfLogKept() {
    guard let opened, opened.logKeptByReader else { return }
    output.printError(
      "tasker: warning: another process is reading the database, so earlier versions of the changed pages "
        + "(old note text, or bodies under an older key) remain in tasker.db or tasker.db-wal; the change itself is saved"
    )
    output.printError(
      "hint: stop the other Tasker process (such as 'tasker mcp') and run the command again to clear the log")
  }

  /// The text a body option names (standard input, a file, or the
  /// editor opened on `current`), checked as UTF-8; nil when none was given.
  ///
  /// - Throws: `CLIError.invalidUTF8`, `.inputTooLarge`, `.cannotRead`,
  ///   `.editorFailed`, and `current`'s errors.
  func body(_ source: BodySource?, current: () throws -> String = { "" }) throws -> String? {
    guard let source else { return nil }
    switch source {
    case .standardInput: return try BodySource.text(try input(), from: "standard input")
    case .file(let path): return try BodySource.text(try BodySource.read(path), from: path)
    case .editor: return try BodyEditor(environment: environment).edit(try current())
    }
  }
}

/// Where a command writes: standard output and standard error, written
/// straight to their descriptors.
final class OutputStream {
  private let out: FileDescriptor
  private let err: FileDescriptor

  init(out: FileDescriptor = .standardOutput, err: FileDescriptor = .standardError) {
    self.out = out
    self.err = err
  }

  /// Writes `text` and a newline to standard output, with every control
  /// character but newline and tab made visible (`TerminalText`): the net
  /// under every plain printer, so nothing stored or typed reaches the
  /// terminal raw. Fields inside a line are made visible whole by the
  /// printer before (`TerminalText.visible(_:)`).
  func print(_ text: String) throws {
    try write(Array((TerminalText.visible(text, keepingLines: true) + "\n").utf8))
  }

  /// Writes one line of JSON text, exactly as its writer encoded it.
  func printJSON(_ text: String) throws {
    try write(Array((text + "\n").utf8))
  }

  /// Writes bytes to standard output.
  func write(_ bytes: [UInt8]) throws {
    do {
      try out.write(bytes)
    } catch {
      throw CLIError.cannotWrite(path: "standard output", reason: "\(error)")
    }
  }

  /// Encodes `value` as one line of JSON (sorted keys) on standard output.
  func json<Value: Encodable>(_ value: Value) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    var bytes = [UInt8](try encoder.encode(value))
    bytes.append(UInt8(ascii: "\n"))
    try write(bytes)
  }

  /// Writes a line to standard error, control characters but newline and
  /// tab made visible (errors echo the values they refuse).
  func printError(_ text: String) {
    try? err.write(Array((TerminalText.visible(text, keepingLines: true) + "\n").utf8))
  }
}
