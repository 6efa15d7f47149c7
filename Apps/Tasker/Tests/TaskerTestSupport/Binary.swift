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

  /// The shipped builds that exist on this machine: `make app-release`'s
  /// `tasker` (Apps/Tasker/.build/shipped/release) and `make release`'s
  /// `taskkey` (.build/release), for tests that must hold for what users run.
  public static var shipped: [Binary] {
    let app = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    return [
      app.appendingPathComponent(".build/shipped/release/tasker").path,
      app.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/release/taskkey")
        .path,
    ].filter { FileManager.default.isExecutableFile(atPath: $0) }.map(Binary.init(path:))
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

  /// The process id.
  public var pid: Int32 { process.processIdentifier }

  /// Writes to the process's standard input, leaving it open.
  public func write(_ bytes: [UInt8]) throws {
    try input.fileHandleForWriting.write(contentsOf: Data(bytes))
  }

  /// Sends `signal`.
  public func send(_ signal: Int32) {
    Foundation.kill(process.processIdentifier, signal)
  }

  /// Waits until the process sleeps reading (standard input), or `seconds` pass.
  public func waitUntilBlockedReading(seconds: Double = 10) {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
      let wchan = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? ""
      if stat.contains(") S ") && (wchan.contains("pipe") || wchan.contains("read")) { return }
      usleep(20_000)
    }
  }

  /// Whether the process ended by a signal (then `status` of `finish` is
  /// the signal's number); valid once it has ended.
  public var signalled: Bool { process.terminationReason == .uncaughtSignal }
}

private final class DataBox: @unchecked Sendable {
  var data = Data()
}
