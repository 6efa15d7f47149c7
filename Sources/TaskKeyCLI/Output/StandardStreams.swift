import Foundation
import TaskCrypto
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
/// command reads input and writes output, secrets included, so a
/// command's I/O is explicit and testable.
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
  func write(_ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { try writeOutput($0) }
  }

  /// Writes secret bytes to standard output straight from locked memory,
  /// never through a `String` or `Array`.
  func write(secret: SecureBytes) throws {
    try secret.withUnsafeBytes { try writeOutput($0) }
  }

  /// Writes a line to standard output.
  func print(_ text: String) throws {
    try write(Array((text + "\n").utf8))
  }

  /// Writes `value` as one line of JSON.
  func printJSON<T: Encodable>(_ value: T) throws {
    try print(try jsonText(value))
  }

  /// Writes a line to standard error, whatever the verbosity (errors).
  func printError(_ text: String) {
    Array((text + "\n").utf8).withUnsafeBytes { writeError($0) }
  }

  /// A note on standard error, left out with `-q`.
  func note(_ text: String) {
    if verbosity != .quiet { printError(text) }
  }

  /// A note for a person watching: only when standard error is a terminal
  /// and not `-q` (progress, "this takes a second").
  func terminalNote(_ text: String) {
    if errorIsTerminal && verbosity != .quiet { printError(text) }
  }

  /// A detail on standard error, only with `-v`.
  func detail(_ text: String) {
    if verbosity == .verbose { printError(text) }
  }

  /// Redraws a progress line on standard error (terminal only, not `-q`).
  func progress(_ text: String, done: Bool) {
    guard errorIsTerminal && verbosity != .quiet else { return }
    Array(("\r" + text + (done ? "\n" : "")).utf8).withUnsafeBytes { writeError($0) }
  }

  // MARK: - Input

  /// Reads all of standard input, failing above `limit` bytes.
  ///
  /// - Throws: `CLIError.inputTooLarge`, read errors.
  func readAll(limit: Int) throws -> [UInt8] {
    var result = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = try chunk.withUnsafeMutableBytes { try readInput($0) }
      if count == 0 { return result }
      result.append(contentsOf: chunk[0..<count])
      if result.count > limit { throw CLIError.inputTooLarge(limit: limit) }
    }
  }

  /// Reads standard input straight into locked memory, refusing more than
  /// `limit` bytes; removes one trailing newline unless `exact`. When
  /// standard input is a terminal, `prompt` goes to standard error and one
  /// line is read with echo off, so a pasted secret is never shown.
  ///
  /// - Throws: `CLIError.inputTooLarge`, read errors, `TaskCryptoError`
  ///   when locked memory is refused.
  func readSecret(limit: Int, exact: Bool, prompt: String) throws -> SecureBytes {
    if inputIsTerminal {
      return try Terminal.askOnStandardInput(prompt: prompt, limit: limit) { CLIError.inputTooLarge(limit: limit) }
    }
    let buffer = try SecureBytes(zeroedCount: limit + 2)
    var length = 0
    try buffer.withUnsafeMutableBytes { out in
      while length < out.count {
        let count = try readInput(UnsafeMutableRawBufferPointer(rebasing: out[length...]))
        if count == 0 { break }
        length += count
      }
      if !exact && length > 0 && out[length - 1] == UInt8(ascii: "\n") { length -= 1 }
    }
    guard length <= limit else { throw CLIError.inputTooLarge(limit: limit) }
    return try buffer.withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
  }
}

/// Encodes a value as JSON: sorted keys, no escaped slashes. Field names
/// are snake_case everywhere (README, "JSON output").
func jsonText<T: Encodable>(_ value: T) throws -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
  encoder.keyEncodingStrategy = .convertToSnakeCase
  return String(decoding: try encoder.encode(value), as: UTF8.self)
}
