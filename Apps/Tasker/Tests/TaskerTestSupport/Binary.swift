import Foundation

/// What one run of a binary did.
public struct ProcessResult: Sendable {
  /// The exit status.
  public let status: Int32
  /// Everything written to standard output.
  public let stdout: [UInt8]
  /// Everything written to standard error, as text.
  public let stderr: String

  /// Standard output as text.
  public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }

  /// Standard output parsed as JSON.
  public func json() throws -> Any {
    try JSONSerialization.jsonObject(with: Data(stdout), options: [.fragmentsAllowed])
  }
}

/// A real, built binary that tests run.
public struct Binary: Sendable {
  /// Its path.
  public let path: String

  /// A binary at `path`.
  public init(path: String) {
    self.path = path
  }

  /// The directory of the running test bundle (SwiftPM's products directory).
  static var productsDirectory: String {
    URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
  }

  /// `tasker`, built beside the tests (`$TASKER_BINARY` overrides).
  public static var tasker: Binary {
    Binary(path: ProcessInfo.processInfo.environment["TASKER_BINARY"] ?? productsDirectory + "/tasker")
  }

  /// `taskkey`, built beside the tests as a product of the TaskKey package
  /// (`$TASKKEY_BINARY` overrides).
  public static var taskkey: Binary {
    Binary(path: ProcessInfo.processInfo.environment["TASKKEY_BINARY"] ?? productsDirectory + "/taskkey")
  }

  /// The first `name` on `/usr/bin:/bin`, or `name` itself.
  public static func which(_ name: String) -> String {
    for directory in ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
      return directory + "/" + name
    }
    return name
  }

  /// Runs the binary with `stdin`, a clean environment plus `environment`,
  /// and waits for it.
  public func run(
    _ arguments: [String], stdin: [UInt8] = [], environment: [String: String] = [:]
  ) throws -> ProcessResult {
    let process = try start(arguments, environment: environment)
    return try process.finish(stdin: stdin)
  }

  /// Starts the binary without waiting, for tests that kill it.
  public func start(_ arguments: [String], environment: [String: String] = [:]) throws -> RunningProcess {
    // A command that exits before reading its input would otherwise kill the
    // test process with SIGPIPE when we write to it.
    signal(SIGPIPE, SIG_IGN)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    var env = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
    if let home = ProcessInfo.processInfo.environment["HOME"] { env["HOME"] = home }
    for (key, value) in environment { env[key] = value }
    process.environment = env
    return try RunningProcess(process)
  }
}

/// A started process whose output is being collected.
public final class RunningProcess: @unchecked Sendable {
  /// The process.
  public let process: Process
  private let input = Pipe()
  private let output = Pipe()
  private let error = Pipe()
  private let group = DispatchGroup()
  private let outBox = DataBox()
  private let errBox = DataBox()

  init(_ process: Process) throws {
    self.process = process
    process.standardInput = input
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let outBox = outBox
    let errBox = errBox
    let output = output
    let error = error
    DispatchQueue.global().async(group: group) { outBox.data = output.fileHandleForReading.readDataToEndOfFile() }
    DispatchQueue.global().async(group: group) { errBox.data = error.fileHandleForReading.readDataToEndOfFile() }
  }

  /// Feeds `stdin`, waits for the exit, and returns what it wrote.
  public func finish(stdin: [UInt8] = []) throws -> ProcessResult {
    let input = input
    DispatchQueue.global().async(group: group) {
      try? input.fileHandleForWriting.write(contentsOf: Data(stdin))
      try? input.fileHandleForWriting.close()
    }
    process.waitUntilExit()
    group.wait()
    return ProcessResult(
      status: process.terminationStatus, stdout: [UInt8](outBox.data),
      stderr: String(decoding: errBox.data, as: UTF8.self))
  }

  /// Sends SIGKILL.
  public func kill() {
    Foundation.kill(process.processIdentifier, SIGKILL)
  }
}

private final class DataBox: @unchecked Sendable {
  var data = Data()
}
