import CommandKit
import TaskSystem

/// Where a note or a page body comes from. Never the command line: every
/// local user reads a process's arguments in `/proc/PID/cmdline`, so
/// `--notes TEXT` is refused and the text arrives on standard input
/// (`--notes -`), from a file (`--notes-file F`) or from the editor
/// (`--notes-in-editor`, `edit` only).
enum BodySource: Equatable {
  /// `--notes -`: standard input, one trailing newline removed.
  case standardInput
  /// `--notes-file F`: the file's text, one trailing newline removed.
  case file(String)
  /// `--notes-in-editor`: `$VISUAL` or `$EDITOR` on a private tmpfs file
  /// holding the current text (`BodyEditor`).
  case editor

  /// The options of a body named `name` (`notes`, `body`): `--NAME -`,
  /// `--NAME-file F` and, when `editor`, `--NAME-in-editor`.
  static func options(_ name: String, what: String, editor: Bool) -> [OptionSpec] {
    var options = [
      OptionSpec.value(
        "--\(name)", "-",
        help: "Read the \(what) from standard input ('-' only: the \(what) is never taken on the command line, "
          + "where every local user can read it)."),
      OptionSpec.value("--\(name)-file", "F", .file, help: "Read the \(what) from the file F."),
    ]
    if editor {
      options.append(
        .flag(
          "--\(name)-in-editor",
          help: "Edit the \(what) in $VISUAL or $EDITOR (a private tmpfs file, wiped and removed after)."))
    }
    return options
  }

  /// Reads `--NAME -`, `--NAME-file F` and, when `editor` is true,
  /// `--NAME-in-editor`; at most one of them.
  ///
  /// - Returns: nil when none was given.
  /// - Throws: `CLIError.textOnCommandLine` for `--NAME TEXT`, usage errors.
  static func parse(_ name: String, editor: Bool, from arguments: ParsedArguments) throws -> BodySource? {
    let declared = options(name, what: "", editor: editor)
    var found = [BodySource]()
    if let value = arguments.value(declared[0]) {
      guard value == "-" else { throw CLIError.textOnCommandLine(option: declared[0].long, editor: editor) }
      found.append(.standardInput)
    }
    if let path = arguments.value(declared[1]) { found.append(.file(path)) }
    if editor, arguments.flag(declared[2]) { found.append(.editor) }
    guard found.count <= 1 else {
      let option = declared[0].long
      throw arguments.usageError(
        "give one of \(option) -, \(option)-file\(editor ? " and \(option)-in-editor" : ""), not several")
    }
    return found.first
  }

  /// Reads the file at `path`, at most `TaskerMain.inputLimit` bytes.
  ///
  /// - Throws: `InputTooLarge`, `CLIError.cannotRead`.
  static func read(_ path: String) throws -> [UInt8] {
    do {
      return try OpenFile.reading(path).readAll(limit: TaskerMain.inputLimit)
    } catch SystemError.tooLarge {
      throw InputTooLarge(source: path, limit: TaskerMain.inputLimit)
    } catch let error as SystemError {
      throw CLIError.cannotRead(path: path, reason: error.description)
    }
  }

  /// `bytes` as text, one trailing newline removed; refused unless valid
  /// UTF-8 (never repaired into U+FFFD, which would store other text than
  /// the user's).
  ///
  /// - Throws: `CLIError.invalidUTF8` naming `source`.
  static func text(_ bytes: [UInt8], from source: String) throws -> String {
    guard var text = String(validating: bytes, as: UTF8.self) else { throw CLIError.invalidUTF8(source: source) }
    if text.hasSuffix("\n") { text.removeLast() }
    return text
  }
}
