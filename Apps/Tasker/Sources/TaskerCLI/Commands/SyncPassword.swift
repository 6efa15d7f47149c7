import CommandKit
import TaskCrypto
import TaskSystem

/// The WebDAV password for `sync setup`: the first line of an owner-only
/// file, or typed on the terminal with echo off. Never an argument, never
/// an environment variable, never written anywhere but the vault.
enum SyncPassword {
  /// The longest password read.
  static let limit = 1024

  /// Reads the password from `file`, or from the terminal when nil.
  ///
  /// - Throws: `SystemError` for an unsafe or missing file (77, 66),
  ///   `UsageError` without a terminal, `CLIError.cannotRead`.
  static func read(file: String?) throws -> SecureBytes {
    if let file {
      guard let opened = try OpenFile.ownerOnly(file) else { throw SystemError.notFound(file) }
      return try withExtendedLifetime(opened) { try firstLine(of: opened.descriptor) }
    }
    guard let terminal = ControllingTerminal() else {
      throw UsageError(message: "no terminal to ask the WebDAV password on", usage: "use --password-file F (mode 0600)")
    }
    return try terminal.withEchoOff {
      try terminal.descriptor.write(Array("WebDAV password: ".utf8))
      return try firstLine(of: terminal.descriptor)
    }
  }

  /// One line (LF or CR LF ended, or to the end), into locked memory.
  static func firstLine(of input: FileDescriptor) throws -> SecureBytes {
    let buffer = try SecureBytes(zeroedCount: limit + 2)
    var count = 0
    try buffer.withUnsafeMutableBytes { out in
      var byte = UInt8(0)
      while try withUnsafeMutableBytes(of: &byte, { try input.readSome(into: $0) }) == 1, byte != UInt8(ascii: "\n") {
        guard count <= limit else { throw UsageError(message: "the password is over \(limit) bytes", usage: "") }
        out[count] = byte
        count += 1
      }
      byte = 0
      if count > 0 && out[count - 1] == UInt8(ascii: "\r") { count -= 1 }
    }
    guard count > 0 else {
      throw UsageError(message: "an empty WebDAV password", usage: "give the server's app password")
    }
    return try buffer.withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
  }
}
