import Foundation

/// Runs `taskkey` on a fresh pseudo-terminal through scripts/pty-drive.py
/// and answers its prompts, so tests see what a person at a terminal sees.
public enum TerminalDriver {
  /// What one driven run did.
  public struct Outcome: Sendable {
    /// The exit code, or minus the signal number.
    public var status: Int
    /// Everything the terminal showed (prompts and any echo).
    public var terminal: String
    /// Standard output, which goes to a file, not to the terminal.
    public var stdout: String
    /// Standard error, which goes to a file unless `interactive`.
    public var stderr: String
  }

  /// scripts/pty-drive.py in this checkout.
  public static let script = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("scripts/pty-drive.py").path

  /// Runs `taskkey arguments…` with `TASKKEY_HOME` set to `home/keys`:
  /// for each step, waits for `expect` on the terminal, then types `send`.
  ///
  /// - Parameter interactive: standard input and standard error are the
  ///   terminal too (else /dev/null and a file), as when a person runs
  ///   `taskkey verify` by hand.
  /// - Throws: Foundation's errors, or when the driver prints no report.
  public static func drive(
    _ arguments: [String], home: TemporaryDirectory, steps: [(expect: String, send: String)],
    interactive: Bool = false
  ) throws -> Outcome {
    try drive(
      command: [TaskKeyBinary.url.path] + arguments,
      environment: ["TASKKEY_HOME": home.path("keys"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], home: home,
      steps: steps, interactive: interactive)
  }

  /// Runs any `command` (a shell, say) on a fresh pseudo-terminal with
  /// exactly `environment`, answering `steps` as above; its output files
  /// go to `home`.
  ///
  /// - Throws: Foundation's errors, or when the driver prints no report.
  public static func drive(
    command: [String], environment: [String: String], home: TemporaryDirectory,
    steps: [(expect: String, send: String)], interactive: Bool
  ) throws -> Outcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments =
      ["python3", script] + (interactive ? ["--interactive"] : []) + [home.path("out"), home.path("err"), "--"]
      + command
    process.environment = environment
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    let script = try JSONSerialization.data(withJSONObject: steps.map { ["expect": $0.expect, "send": $0.send] })
    try input.fileHandleForWriting.write(contentsOf: script)
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
      let status = object["status"] as? Int, let terminal = object["terminal"] as? String
    else { throw SetupFailure(description: "pty-drive.py printed no report") }
    return Outcome(
      status: status, terminal: terminal,
      stdout: (try? String(contentsOfFile: home.path("out"), encoding: .utf8)) ?? "",
      stderr: (try? String(contentsOfFile: home.path("err"), encoding: .utf8)) ?? "")
  }
}
