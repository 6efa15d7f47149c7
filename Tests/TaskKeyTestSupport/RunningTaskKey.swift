import Foundation

/// A `taskkey` process started and left running, with its standard input
/// kept open, so a test can signal it mid-command or read its /proc entry.
public final class RunningTaskKey: @unchecked Sendable {
  /// How a finished run ended.
  public struct Ending: Sendable {
    /// The exit code, or the signal number when `signalled`.
    public let status: Int32
    /// Whether a signal ended the process.
    public let signalled: Bool
    /// Everything written to standard output.
    public let stdout: [UInt8]
    /// Everything written to standard error.
    public let stderr: [UInt8]
  }

  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private let error = Pipe()
  private let group = DispatchGroup()
  private let outBox = Box()
  private let errBox = Box()

  /// Starts `taskkey arguments…` with a clean environment plus `environment`.
  ///
  /// - Throws: Foundation's error when the binary cannot be started.
  public init(_ arguments: [String], environment: [String: String] = [:]) throws {
    signal(SIGPIPE, SIG_IGN)
    process.executableURL = TaskKeyBinary.url
    process.arguments = arguments
    var env = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
    for (key, value) in environment { env[key] = value }
    process.environment = env
    process.standardInput = input
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let (outBox, errBox, output, error) = (self.outBox, self.errBox, self.output, self.error)
    DispatchQueue.global().async(group: group) { outBox.data = output.fileHandleForReading.readDataToEndOfFile() }
    DispatchQueue.global().async(group: group) { errBox.data = error.fileHandleForReading.readDataToEndOfFile() }
  }

  /// The process id.
  public var pid: Int32 { process.processIdentifier }

  /// Writes to the process's standard input, leaving it open.
  public func write(_ bytes: [UInt8]) throws {
    try input.fileHandleForWriting.write(contentsOf: Data(bytes))
  }

  /// Closes standard input (end of file for the process).
  public func closeInput() throws {
    try input.fileHandleForWriting.close()
  }

  /// Sends `signal` to the process.
  public func send(_ signal: Int32) {
    kill(process.processIdentifier, signal)
  }

  /// Waits until the process has blocked reading standard input, after
  /// reading what was written, or `seconds` pass.
  public func waitUntilBlockedReading(seconds: Double = 10) {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
      let wchan = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? ""
      if stat.contains(") S ") && (wchan.contains("pipe") || wchan.contains("read")) { return }
      usleep(20_000)
    }
  }

  /// Waits for the process to end and collects its output.
  public func wait() -> Ending {
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
    group.wait()
    return Ending(
      status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
      stdout: [UInt8](outBox.data), stderr: [UInt8](errBox.data))
  }
}

private final class Box: @unchecked Sendable {
  var data = Data()
}

/// Runs `/bin/sh -c script` with `$0` set to the taskkey binary, so a test
/// can hand it arguments that are not UTF-8 (made with printf), which
/// Foundation's `Process` cannot pass.
///
/// - Throws: Foundation's error when the shell cannot be started.
public func runTaskKeyInShell(_ script: String, environment: [String: String] = [:], in directory: String? = nil)
  throws -> ProcessResult
{
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/sh")
  process.arguments = ["-c", script, TaskKeyBinary.url.path]
  var env = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
  for (key, value) in environment { env[key] = value }
  process.environment = env
  if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
  let output = Pipe()
  let error = Pipe()
  process.standardInput = FileHandle.nullDevice
  process.standardOutput = output
  process.standardError = error
  try process.run()
  let group = DispatchGroup()
  let outBox = Box()
  DispatchQueue.global().async(group: group) { outBox.data = output.fileHandleForReading.readDataToEndOfFile() }
  let errData = error.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  group.wait()
  return ProcessResult(
    status: process.terminationStatus, stdout: [UInt8](outBox.data), stderr: String(decoding: errData, as: UTF8.self))
}
