import Foundation

/// What one run of the `taskkey` binary did.
public struct ProcessResult: Sendable {
  /// The exit status.
  public let status: Int32
  /// Everything written to standard output.
  public let stdout: [UInt8]
  /// Everything written to standard error, as text.
  public let stderr: String

  /// Standard output as text.
  public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

/// Runs the real, built `taskkey` binary, as integration tests must.
public enum TaskKeyBinary {
  /// `$TASKKEY_BINARY` when set, else `taskkey` beside the running test
  /// bundle (SwiftPM puts both in the same products directory).
  public static var url: URL {
    if let path = ProcessInfo.processInfo.environment["TASKKEY_BINARY"] {
      return URL(fileURLWithPath: path)
    }
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("taskkey")
  }

  /// Runs `taskkey arguments…` with `stdin`, a clean environment plus
  /// `environment`, in `directory`, and waits for it; with `detached`, in a
  /// new session without a controlling terminal (`setsid`), so no prompt
  /// can reach the terminal the tests run in.
  public static func run(
    _ arguments: [String],
    stdin: [UInt8] = [],
    environment: [String: String] = [:],
    in directory: URL? = nil,
    detached: Bool = false
  ) throws -> ProcessResult {
    // A command that exits before reading its input would otherwise kill the
    // test process with SIGPIPE when we write to it.
    signal(SIGPIPE, SIG_IGN)
    let process = Process()
    if detached {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
      process.arguments = ["--wait", url.path] + arguments
    } else {
      process.executableURL = url
      process.arguments = arguments
    }
    var env = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
    if let home = ProcessInfo.processInfo.environment["HOME"] { env["HOME"] = home }
    for (key, value) in environment { env[key] = value }
    process.environment = env
    if let directory { process.currentDirectoryURL = directory }
    let input = Pipe()
    let output = Pipe()
    let error = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = error
    try process.run()

    // Feed and drain concurrently so large inputs and outputs cannot deadlock.
    let group = DispatchGroup()
    let outBox = DataBox()
    let errBox = DataBox()
    DispatchQueue.global().async(group: group) {
      outBox.data = output.fileHandleForReading.readDataToEndOfFile()
    }
    DispatchQueue.global().async(group: group) {
      errBox.data = error.fileHandleForReading.readDataToEndOfFile()
    }
    DispatchQueue.global().async(group: group) {
      try? input.fileHandleForWriting.write(contentsOf: Data(stdin))
      try? input.fileHandleForWriting.close()
    }
    process.waitUntilExit()
    group.wait()
    return ProcessResult(
      status: process.terminationStatus,
      stdout: [UInt8](outBox.data),
      stderr: String(decoding: errBox.data, as: UTF8.self))
  }

  /// Runs with UTF-8 text on standard input.
  public static func run(
    _ arguments: [String],
    input: String,
    environment: [String: String] = [:],
    in directory: URL? = nil
  ) throws -> ProcessResult {
    try run(arguments, stdin: Array(input.utf8), environment: environment, in: directory)
  }
}

private final class DataBox: @unchecked Sendable {
  var data = Data()
}

/// A fresh directory under the system temporary directory, mode 0700,
/// removed with everything in it when released.
public final class TemporaryDirectory: @unchecked Sendable {
  /// The directory.
  public let url: URL

  /// Creates the directory.
  public init() throws {
    var template = Array((NSTemporaryDirectory() + "/taskkey-test-XXXXXX").utf8CString)
    guard let path = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
      throw CocoaError(.fileWriteUnknown)
    }
    url = URL(fileURLWithPath: String(cString: path))
  }

  /// The path of `name` inside the directory.
  public func path(_ name: String) -> String {
    url.appendingPathComponent(name).path
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }
}
