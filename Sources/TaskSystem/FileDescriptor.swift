import Glibc

/// An open file descriptor that this code does not own (standard streams,
/// a descriptor named on the command line): reads and writes that retry on
/// EINTR and short counts. Closing is the owner's business.
public struct FileDescriptor: Sendable, Equatable {
  /// The descriptor number.
  public let rawValue: Int32
  /// The name used in errors (`<stdin>`, a path, `<fd 3>`).
  public let name: String

  /// Wraps a descriptor number, naming it in errors.
  public init(_ rawValue: Int32, name: String) {
    self.rawValue = rawValue
    self.name = name
  }

  /// Standard input, output and error.
  public static let standardInput = FileDescriptor(0, name: "<stdin>")
  /// Standard output.
  public static let standardOutput = FileDescriptor(1, name: "<stdout>")
  /// Standard error.
  public static let standardError = FileDescriptor(2, name: "<stderr>")

  /// Whether the descriptor is a terminal.
  public var isTerminal: Bool { isatty(rawValue) == 1 }

  /// One `read(2)`, retried on EINTR.
  ///
  /// - Returns: the byte count read; 0 at end of file.
  /// - Throws: `SystemError.failed` with the call `read`.
  public func readSome(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard buffer.count > 0 else { return 0 }
    return try retrying("read", name) { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
  }

  /// Reads until `buffer` is full or the end of file.
  ///
  /// - Returns: the byte count read.
  /// - Throws: `SystemError.failed` with the call `read`.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    var total = 0
    while total < buffer.count {
      let count = try readSome(into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]))
      if count == 0 { break }
      total += count
    }
    return total
  }

  /// Reads to the end of file, refusing more than `limit` bytes.
  ///
  /// - Returns: every byte read.
  /// - Throws: `SystemError.tooLarge` above `limit`, `.failed` for `read`.
  ///
  /// - Parameter expected: the size the caller expects (from `fstat`), at
  ///   most `limit`: that many bytes are read straight into the result,
  ///   in one allocation; a file that grew or shrank is still read whole.
  public func readToEnd(limit: Int, expected: Int = 0) throws -> [UInt8] {
    var result = [UInt8]()
    let first = Swift.max(0, Swift.min(expected, limit))
    if first > 0 {
      var filled = 0
      result = try [UInt8](unsafeUninitializedCapacity: first) { buffer, initialized in
        filled = try read(into: UnsafeMutableRawBufferPointer(buffer))
        initialized = filled
      }
      if filled < first { return result }
    }
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = try chunk.withUnsafeMutableBytes { try readSome(into: $0) }
      if count == 0 { return result }
      result.append(contentsOf: chunk[0..<count])
      guard result.count <= limit else { throw SystemError.tooLarge(path: name, byteCount: result.count, limit: limit) }
    }
  }

  /// Writes all of `bytes`, retrying on EINTR and short writes.
  ///
  /// - Throws: `SystemError.failed` with the call `write`.
  public func write(_ bytes: UnsafeRawBufferPointer) throws {
    var offset = 0
    while offset < bytes.count {
      offset += try retrying("write", name) { Glibc.write(rawValue, bytes.baseAddress! + offset, bytes.count - offset) }
    }
  }

  /// Writes all of `bytes`, retrying on EINTR and short writes.
  ///
  /// - Throws: `SystemError.failed` with the call `write`.
  public func write(_ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { try write($0) }
  }
}
