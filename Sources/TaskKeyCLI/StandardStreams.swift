import TaskSystem

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
  SystemError.describe(errno: code)
}

extension CLIError {
  /// The CLI's error for a TaskSystem failure: a failed `open` is "cannot
  /// open", a refused file keeps its own case (exit 77), anything else is
  /// an I/O error.
  init(_ error: SystemError) {
    switch error {
    case .failed("open", let path, let code): self = .cannotOpen(path: path, reason: errnoDescription(code))
    case .failed(let call, let path, let code): self = .io(path: path, call: call, errno: code)
    case .loosePermissions(let path, let mode, _): self = .unsafePermissions(path: path, mode: mode)
    case .notOwner(let path): self = .notOwner(path: path)
    case .wrongFileType(let path, _), .untrustedSymlink(let path): self = .notRegularFile(path: path)
    case .tooLarge(_, _, let limit): self = .inputTooLarge(limit: limit)
    case .runtimeDirectoryUnavailable(let reason): self = .cannotOpen(path: "/dev/shm", reason: reason)
    }
  }
}

/// Runs TaskSystem calls, mapping their errors into the CLI's.
func systemCall<T>(_ body: () throws -> T) throws -> T {
  do {
    return try body()
  } catch let error as SystemError {
    throw CLIError(error)
  }
}

/// Reads a descriptor to its end, retrying on EINTR, failing above `limit`.
func readAll(fd: Int32, path: String, limit: Int) throws -> [UInt8] {
  try systemCall { try FileDescriptor(fd, name: path).readToEnd(limit: limit) }
}

/// Writes all of `bytes`, retrying on EINTR and short writes.
func writeAll(fd: Int32, _ bytes: [UInt8], path: String) throws {
  try bytes.withUnsafeBytes { try writeAll(fd: fd, $0, path: path) }
}

/// Writes all of a raw buffer, retrying on EINTR and short writes.
func writeAll(fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
  try systemCall { try FileDescriptor(fd, name: path).write(bytes) }
}

/// Reads a whole input file (a bundle, a batch), refusing more than `limit` bytes.
func readInputFile(_ path: String, limit: Int) throws -> [UInt8] {
  try systemCall { try OpenFile.reading(path).readAll(limit: limit) }
}

/// Creates the new file `path` with `contents` (TaskSystem's durable
/// create: 0600, `O_EXCL`, synced with its directory); never overwrites.
func createNewFile(_ path: String, contents: UnsafeRawBufferPointer) throws {
  do {
    try PosixFileSystem().createNew(path, contents: contents)
  } catch let error as SystemError where error.isAlreadyExisting {
    throw CLIError.fileExists(path: path)
  } catch let error as SystemError {
    throw CLIError(error)
  }
}

/// Refuses to write binary data to a terminal.
func refuseBinaryOnTerminal(_ what: String) throws {
  guard !FileDescriptor.standardOutput.isTerminal else {
    throw CLIError.usage(message: "refusing to write \(what) to a terminal", usage: "use --out F or redirect stdout")
  }
}
