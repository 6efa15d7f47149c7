import Glibc

/// The process's standard streams and environment, behind one value so a
/// command's I/O is explicit.
public struct StandardStreams {
  /// Reads all of standard input, up to `limit` bytes.
  public var readInput: (_ limit: Int) throws -> [UInt8]
  /// Writes to standard output.
  public var writeOutput: ([UInt8]) throws -> Void
  /// Writes to standard error.
  public var writeError: ([UInt8]) -> Void
  /// The environment.
  public var environment: [String: String]

  /// The real streams of this process: file descriptors 0, 1 and 2.
  public static func process(environment: [String: String]) -> StandardStreams {
    StandardStreams(
      readInput: { limit in try readAll(fd: 0, path: "<stdin>", limit: limit) },
      writeOutput: { bytes in try writeAll(fd: 1, bytes, path: "<stdout>") },
      writeError: { bytes in try? writeAll(fd: 2, bytes, path: "<stderr>") },
      environment: environment)
  }

  func print(_ text: String) throws {
    try writeOutput(Array((text + "\n").utf8))
  }

  func printError(_ text: String) {
    writeError(Array((text + "\n").utf8))
  }
}

/// `strerror` text for an errno value.
func errnoDescription(_ code: Int32) -> String {
  guard let text = strerror(code) else { return "errno \(code)" }
  return "\(String(cString: text)) (errno \(code))"
}

/// Reads a descriptor to its end, retrying on EINTR, failing above `limit`.
func readAll(fd: Int32, path: String, limit: Int) throws -> [UInt8] {
  var result = [UInt8]()
  var chunk = [UInt8](repeating: 0, count: 65536)
  while true {
    let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if count < 0 {
      if errno == EINTR { continue }
      throw CLIError.io(path: path, call: "read", errno: errno)
    }
    if count == 0 { break }
    result.append(contentsOf: chunk[0..<count])
    if result.count > limit { throw CLIError.inputTooLarge(limit: limit) }
  }
  return result
}

/// Writes all of `bytes`, retrying on EINTR and short writes.
func writeAll(fd: Int32, _ bytes: [UInt8], path: String) throws {
  try bytes.withUnsafeBytes { try writeAll(fd: fd, $0, path: path) }
}

/// Writes all of a raw buffer, retrying on EINTR and short writes.
func writeAll(fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
  var offset = 0
  while offset < bytes.count {
    let count = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
    if count < 0 {
      if errno == EINTR { continue }
      throw CLIError.io(path: path, call: "write", errno: errno)
    }
    offset += count
  }
}

/// Refuses to write binary data to a terminal.
func refuseBinaryOnTerminal(_ what: String) throws {
  guard isatty(1) == 0 else {
    throw CLIError.usage(message: "refusing to write \(what) to a terminal", usage: "use --out F or redirect stdout")
  }
}
