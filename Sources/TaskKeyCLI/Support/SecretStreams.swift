import CommandKit
import TaskCrypto

extension StandardStreams {
  /// Writes secret bytes to standard output straight from locked memory,
  /// never through a `String` or `Array`.
  func write(secret: SecureBytes) throws {
    try secret.withUnsafeBytes { try writeOutput($0) }
  }

  /// Reads standard input straight into locked memory, refusing more than
  /// `limit` bytes; removes one trailing newline unless `exact`. When
  /// standard input is a terminal, `prompt` goes to standard error and one
  /// line is read with echo off, so a pasted secret is never shown.
  ///
  /// - Throws: `InputTooLarge`, read errors, `TaskCryptoError` when locked
  ///   memory is refused.
  func readSecret(limit: Int, exact: Bool, prompt: String) throws -> SecureBytes {
    let tooLarge = InputTooLarge(source: "the input", limit: limit)
    if inputIsTerminal {
      return try Terminal.askOnStandardInput(prompt: prompt, limit: limit) { tooLarge }
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
    guard length <= limit else { throw tooLarge }
    return try buffer.withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
  }
}
