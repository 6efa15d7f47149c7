import CommandKit
import FoundationEssentials
import TaskSystem
import TaskerCore

/// `--notes-in-editor` and `--body-in-editor`, as `pass edit` does it: the
/// current text goes into a 0600 file in a new 0700 directory in memory
/// that a reboot clears and no other user can read (TaskKey's runtime
/// directory: `$XDG_RUNTIME_DIR/taskkey` or `/run/user/UID/taskkey` when
/// that is the user's private tmpfs, else the user's private directory in
/// `/dev/shm`); `$VISUAL` (else `$EDITOR`, else `vi`) runs on it through
/// `/bin/sh`; the file is read back, checked as UTF-8, and then every file
/// in the directory (the editor's swap and backup files too) is
/// overwritten with zeros, synced and removed, and the directory with them.
/// The text never reaches persistent disk or the command line.
struct BodyEditor {
  /// The command's environment: `VISUAL` and `EDITOR`.
  let environment: [String: String]

  /// The editor command line: `$VISUAL`, else `$EDITOR`, else `vi`.
  var command: String {
    for name in ["VISUAL", "EDITOR"] {
      if let value = environment[name], !value.allSatisfy(\.isWhitespace) { return value }
    }
    return "vi"
  }

  /// Lets the user edit `text`.
  ///
  /// - Returns: the text as saved, one trailing newline removed.
  /// - Throws: `CLIError.editorFailed` (it could not start or did not exit
  ///   0: nothing is changed), `.invalidUTF8`, `InputTooLarge`,
  ///   `.cannotRead`, and `TaskerError.system` when no private runtime
  ///   directory can be made.
  func edit(_ text: String) throws -> String {
    let directory = try Self.makeDirectory()
    defer { Self.wipe(directory) }
    let path = directory + "/body.txt"
    var initial = Array(text.utf8)
    if !initial.isEmpty { initial.append(UInt8(ascii: "\n")) }
    try Self.system { try PosixFileSystem().createNew(path, contents: initial) }
    Self.overwrite(&initial)
    try run(on: path)
    let saved: [UInt8]
    do {
      guard let file = try OpenFile.ownerOnly(path) else {
        throw CLIError.editorFailed(command: command, reason: "the editor removed the file")
      }
      saved = try file.readAll(limit: TaskerMain.inputLimit)
    } catch SystemError.tooLarge {
      throw InputTooLarge(source: "the edited text", limit: TaskerMain.inputLimit)
    } catch let error as SystemError {
      throw CLIError.cannotRead(path: path, reason: error.description)
    }
    return try BodySource.text(saved, from: "the edited text")
  }

  /// Runs the editor on `path` with the terminal as its streams
  /// (`posix_spawn` through TaskSystem: Foundation's `Process` would pull
  /// CoreFoundation into the shipped build).
  func run(on path: String) throws {
    // As git runs its editor: the command line may hold options; the path is one argument.
    let arguments = ["sh", "-c", command + " \"$1\"", "tasker-editor", path]
    let ending: ChildProcess.Ending
    do {
      ending = try ChildProcess.run(
        "/bin/sh", arguments: arguments, environment: environment.map { "\($0.key)=\($0.value)" })
    } catch {
      throw CLIError.editorFailed(command: command, reason: "cannot start /bin/sh")
    }
    switch ending {
    case .exited(0): return
    case .exited(let status): throw CLIError.editorFailed(command: command, reason: "exited with status \(status)")
    case .signalled(let signal): throw CLIError.editorFailed(command: command, reason: "was ended by signal \(signal)")
    }
  }

  /// A new private directory for one edit inside the runtime directory.
  static func makeDirectory() throws -> String {
    let base = try system { try RuntimeDirectory.sharedMemory() }
    let random = (0..<8).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
    let directory = base + "/tasker-edit-\(ProcessInfo.processInfo.processIdentifier)-\(random)"
    try system { try PrivateDirectory.make(directory, parents: false, allowingSymlink: false) }
    return directory
  }

  /// Overwrites every file in `directory` with zeros, syncs and removes
  /// it, then removes the directory. Best effort: a file the editor left
  /// unwritable is still removed.
  static func wipe(_ directory: String) {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    for name in names {
      let path = directory + "/" + name
      if (try? FileWipe.overwriteAndRemove(path)) == nil { try? PosixFileSystem().unlink(path) }
    }
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// Zeros `bytes` in place (a copy of the text this process made).
  static func overwrite(_ bytes: inout [UInt8]) {
    for index in bytes.indices { bytes[index] = 0 }
  }

  static func system<Result>(_ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch let error as SystemError {
      throw TaskerError.system(error)
    }
  }
}
