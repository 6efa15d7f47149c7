import CommandKit
import TaskCrypto
import TaskSystem

/// The CLI's file and descriptor I/O, on TaskSystem (the one libc edge):
/// EINTR-safe, typed errors (`SystemError`, or `CLIError` where the CLI
/// has its own words).
enum ProcessIO {
  /// Whether a path exists (without following a final symlink).
  static func exists(_ path: String) -> Bool {
    FileStatus.exists(path)
  }

  /// Reads a whole input file (a bundle, a batch) of at most `limit` bytes.
  ///
  /// - Throws: `SystemError` (`isNotFound` when it does not exist,
  ///   `.tooLarge` above the limit).
  static func readFile(_ path: String, limit: Int) throws -> [UInt8] {
    try OpenFile.reading(path).readAll(limit: limit)
  }

  /// Creates a new 0600 file holding `bytes` (TaskSystem's durable create:
  /// `O_EXCL`, synced with its directory); never replaces a file.
  ///
  /// - Throws: `CLIError.fileExists`, `SystemError`.
  static func createNewFile(_ path: String, _ bytes: UnsafeRawBufferPointer) throws {
    do {
      try PosixFileSystem().createNew(path, contents: bytes)
    } catch let error as SystemError where error.isAlreadyExisting {
      throw CLIError.fileExists(path: path)
    }
  }

  /// Reads a file that holds a secret (key file, passphrase file) into
  /// locked memory, up to `limit` bytes (or its first line when
  /// `firstLine`), refusing it unless it is a regular file, not a symbolic
  /// link, owned by the caller, with no group or other permission bits.
  ///
  /// - Throws: `SystemError` for the file (refusals exit 77), `tooLong()`.
  static func readOwnerOnly(_ path: String, limit: Int, firstLine: Bool, tooLong: () -> Error) throws -> SecureBytes {
    guard let file = try OpenFile.ownerOnly(path) else { throw SystemError.notFound(path) }
    return try withExtendedLifetime(file) {
      try readLimited(file.descriptor, limit: limit, firstLine: firstLine, tooLong: tooLong)
    }
  }

  /// Reads up to a newline (when `firstLine`, one byte at a time so nothing
  /// after the line is taken, and one CR before it dropped) or the end,
  /// into locked memory. The limit counts the line without its line end:
  /// `limit` bytes followed by CR LF (or by a CR at the end) are accepted.
  ///
  /// - Throws: `SystemError` for the read, `tooLong()` above `limit`.
  static func readLimited(_ input: FileDescriptor, limit: Int, firstLine: Bool, tooLong: () -> Error) throws
    -> SecureBytes
  {
    // A line may hold one byte more than the limit: the CR of a CR LF.
    let capacity = firstLine ? limit + 1 : limit
    let buffer = try SecureBytes(zeroedCount: capacity + 1)
    var length = 0
    try buffer.withUnsafeMutableBytes { out in
      while true {
        let want = firstLine ? 1 : out.count - length
        guard want > 0 else { throw tooLong() }
        let count = try input.readSome(into: UnsafeMutableRawBufferPointer(rebasing: out[length..<length + want]))
        if count == 0 { break }
        if firstLine && out[length] == UInt8(ascii: "\n") {
          out[length] = 0
          break
        }
        length += count
        // Past the limit only by a CR that may still turn out to end the line.
        let pendingCR = firstLine && length == limit + 1 && out[limit] == UInt8(ascii: "\r")
        if length > limit && !pendingCR { throw tooLong() }
      }
      // A line ends with LF or CR LF: a file written on another system gives
      // the same passphrase (docs/formats/vault-file.md).
      if firstLine && length > 0 && out[length - 1] == UInt8(ascii: "\r") { length -= 1 }
    }
    guard length <= limit else { throw tooLong() }
    return try buffer.withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
  }
}

/// The controlling terminal, for prompts with echo off. Prompts go to
/// `/dev/tty`, never to standard output.
enum Terminal {
  /// Whether the process has a controlling terminal to ask.
  static var isAvailable: Bool { ControllingTerminal() != nil }

  /// Shows `prompt` on the terminal and reads one line with echo off
  /// (echo goes off before the prompt, so nothing typed is flushed).
  ///
  /// - Throws: `CLIError.noTerminal` without a terminal, read errors,
  ///   `tooLong()` above `limit` bytes.
  static func ask(prompt: String, limit: Int, tooLong: () -> Error) throws -> SecureBytes {
    guard let terminal = ControllingTerminal() else { throw CLIError.noTerminal }
    return try readQuietly(terminal.descriptor, prompt: prompt, promptTo: terminal.descriptor, limit: limit, tooLong)
  }

  /// Reads a secret typed or pasted on standard input when it is a
  /// terminal: the prompt goes to standard error, echo is off while the
  /// line is read, and one line is taken (the newline is not part of it).
  static func askOnStandardInput(prompt: String, limit: Int, tooLong: () -> Error) throws -> SecureBytes {
    try readQuietly(.standardInput, prompt: prompt, promptTo: .standardError, limit: limit, tooLong)
  }

  private static func readQuietly(
    _ input: FileDescriptor, prompt: String, promptTo output: FileDescriptor, limit: Int, _ tooLong: () -> Error
  ) throws -> SecureBytes {
    try input.withEchoOff {
      try output.write(Array(prompt.utf8))
      return try ProcessIO.readLimited(input, limit: limit, firstLine: true, tooLong: tooLong)
    }
  }
}
