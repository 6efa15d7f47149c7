import TaskSystem

/// How much a command says on standard error besides errors.
public enum Verbosity: Sendable {
  /// Errors only (`-q`).
  case quiet
  /// Errors and notes (progress, "Deriving the vault key…").
  case normal
  /// Also details: paths, KDF costs (`-v`).
  case verbose
}

/// The process's standard streams and environment: the one way every
/// command of the project reads input and writes output, so a command's
/// I/O is explicit and testable. A program adds its own writers on top
/// (secrets from locked memory in `taskkey`).
public struct StandardStreams {
  /// Reads once from standard input into the buffer; 0 at the end.
  public var readInput: (UnsafeMutableRawBufferPointer) throws -> Int
  /// Writes all of the bytes to standard output.
  public var writeOutput: (UnsafeRawBufferPointer) throws -> Void
  /// Writes to standard error; failures are ignored (there is nowhere
  /// left to report them).
  public var writeError: (UnsafeRawBufferPointer) -> Void
  /// The environment.
  public var environment: [String: String]
  /// Whether standard output is a terminal (times are shown local, binary
  /// output is refused).
  public var outputIsTerminal: Bool
  /// Whether standard error is a terminal (progress and KDF notes).
  public var errorIsTerminal: Bool
  /// Whether standard input is a terminal (a secret is then asked with
  /// echo off instead of read as a stream).
  public var inputIsTerminal: Bool
  /// The descriptors behind the streams, for the streaming attachment
  /// APIs that read and write a descriptor themselves.
  public var descriptors: (input: Int32, output: Int32) = (0, 1)
  /// `-q` / `-v`.
  public var verbosity = Verbosity.normal

  /// Streams from their parts (tests give closures over buffers).
  public init(
    readInput: @escaping (UnsafeMutableRawBufferPointer) throws -> Int,
    writeOutput: @escaping (UnsafeRawBufferPointer) throws -> Void,
    writeError: @escaping (UnsafeRawBufferPointer) -> Void, environment: [String: String], outputIsTerminal: Bool,
    errorIsTerminal: Bool, inputIsTerminal: Bool
  ) {
    self.readInput = readInput
    self.writeOutput = writeOutput
    self.writeError = writeError
    self.environment = environment
    self.outputIsTerminal = outputIsTerminal
    self.errorIsTerminal = errorIsTerminal
    self.inputIsTerminal = inputIsTerminal
  }

  /// The real streams of this process: file descriptors 0, 1 and 2.
  public static func process(environment: [String: String]) -> StandardStreams {
    StandardStreams(
      readInput: { buffer in try FileDescriptor.standardInput.readSome(into: buffer) },
      writeOutput: { bytes in try FileDescriptor.standardOutput.write(bytes) },
      writeError: { bytes in try? FileDescriptor.standardError.write(bytes) },
      environment: environment, outputIsTerminal: FileDescriptor.standardOutput.isTerminal,
      errorIsTerminal: FileDescriptor.standardError.isTerminal, inputIsTerminal: FileDescriptor.standardInput.isTerminal
    )
  }

  // MARK: - Output

  /// Writes bytes to standard output.
  ///
  /// - Throws: what `writeOutput` throws.
  public func write(_ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { try writeOutput($0) }
  }

  /// Writes a line to standard output as it is: for text the program made
  /// (ids, counts, its own words). Text a user or an assistant wrote goes
  /// through `printVisible`.
  public func print(_ text: String) throws {
    try write(Array((text + "\n").utf8))
  }

  /// Writes a line to standard output with every control character but
  /// newline and tab made visible (`TerminalText`): the net under every
  /// printer of stored or typed text.
  public func printVisible(_ text: String) throws {
    try print(TerminalText.visible(text, keepingLines: true))
  }

  /// Writes `value` as one line of JSON (docs/json-output.md).
  public func printJSON(_ value: JSONValue) throws {
    var bytes = value.encoded
    bytes.append(UInt8(ascii: "\n"))
    try write(bytes)
  }

  /// Writes `value` as one line of JSON: encoded by `JSONValueEncoder`
  /// (snake_case keys, explicit nulls, sorted keys).
  ///
  /// - Throws: `JSONValueEncoder`'s errors, write errors.
  public func printJSON<T: Encodable>(_ value: T) throws {
    try printJSON(try JSONValueEncoder.value(of: value))
  }

  /// Writes a line to standard error, whatever the verbosity (errors),
  /// control characters but newline and tab made visible (errors echo the
  /// values they refuse).
  public func printError(_ text: String) {
    Array((TerminalText.visible(text, keepingLines: true) + "\n").utf8).withUnsafeBytes { writeError($0) }
  }

  /// A note on standard error, left out with `-q`.
  public func note(_ text: String) {
    if verbosity != .quiet { printError(text) }
  }

  /// A note for a person watching: only when standard error is a terminal
  /// and not `-q` (progress, "this takes a second").
  public func terminalNote(_ text: String) {
    if errorIsTerminal && verbosity != .quiet { printError(text) }
  }

  /// A detail on standard error, only with `-v`.
  public func detail(_ text: String) {
    if verbosity == .verbose { printError(text) }
  }

  /// Redraws a progress line on standard error (terminal only, not `-q`).
  public func progress(_ text: String, done: Bool) {
    guard errorIsTerminal && verbosity != .quiet else { return }
    Array(("\r" + text + (done ? "\n" : "")).utf8).withUnsafeBytes { writeError($0) }
  }

  // MARK: - Input

  /// Reads all of standard input, failing above `limit` bytes: the one
  /// bounded reader of every command (bodies, batches, bundles).
  ///
  /// - Throws: `InputTooLarge` above the limit, read errors.
  public func readAll(limit: Int) throws -> [UInt8] {
    var result = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = try chunk.withUnsafeMutableBytes { try readInput($0) }
      if count == 0 { return result }
      result.append(contentsOf: chunk[0..<count])
      if result.count > limit { throw InputTooLarge(source: "standard input", limit: limit) }
    }
  }
}

/// An input (standard input, a file) held more bytes than the command
/// accepts; nothing was done with it. Exit 65.
public struct InputTooLarge: Error, Equatable, CommandFailure {
  /// What was read: `standard input`, a path.
  public let source: String
  /// The limit in bytes.
  public let limit: Int

  /// The refusal of `source` above `limit` bytes.
  public init(source: String, limit: Int) {
    self.source = source
    self.limit = limit
  }

  /// `.dataError` (65).
  public var exitCode: ExitCode { .dataError }
  /// `standard input is larger than N bytes`.
  public var message: String { "\(source) is larger than \(limit) bytes; nothing was done" }
  /// None.
  public var hint: String? { nil }
}
