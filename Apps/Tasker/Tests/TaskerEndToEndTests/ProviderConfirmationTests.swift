import Foundation
import TaskKeyTestSupport
import TaskerTestSupport
import Testing

/// The first request to a provider on the public network waits for the
/// user: a prompt on the terminal (scripts/pty-drive.py types the answer),
/// or `--yes`. Each run is inside `unshare -n`, a network namespace of its
/// own with no interface up, so a confirmed request fails to connect
/// (exit 69) and reaches nothing: the test shows what was decided and
/// recorded, never a real service.
@Suite("Providers on the public network: asked once, recorded, never sent unasked")
struct ProviderConfirmationTests {
  static let cloud = "https://203.0.113.7/v1"

  static func device() throws -> TestDevice {
    let device = try TestDevice()
    #expect(
      try device.taskkey(["item", "set", "provider/cloud", "--device-only"], input: "sk-cloud-key\n").status == 0)
    let added = try device.tasker([
      "provider", "add", "cloud", "--url", cloud, "--model", "gpt-test", "--key-item", "provider/cloud",
    ])
    #expect(added.status == 0, "\(added.stderr)")
    #expect(try device.tasker(["add", "Renew the passport"]).status == 0)
    return device
  }

  static func confirmedAt(_ device: TestDevice) throws -> Any? {
    let listed = try #require(try device.tasker(["provider", "list", "--json"]).json() as? [String: Any])
    let providers = try #require(listed["providers"] as? [[String: Any]])
    return providers.first?["confirmed_at"]
  }

  static func outcomes(_ device: TestDevice) throws -> [String] {
    let log = try #require(try device.tasker(["provider", "log", "--json"]).json() as? [String: Any])
    return try #require(log["calls"] as? [[String: Any]]).compactMap { $0["outcome"] as? String }
  }

  /// `tasker ARGUMENTS` on a terminal inside a network namespace of its own.
  static func onTerminal(_ device: TestDevice, _ arguments: [String], answer: String?) throws
    -> TerminalDriver.Outcome
  {
    var environment = device.environment
    environment["PATH"] = "/usr/bin:/bin"
    environment["LANG"] = "C.UTF-8"
    return try TerminalDriver.drive(
      command: [Binary.which("unshare")] + (Sandbox.unshare ?? []) + ["--", Binary.tasker.path] + arguments,
      environment: environment, home: try TaskKeyTestSupport.TemporaryDirectory(),
      steps: answer.map { [(expect: "[y/N]", send: $0 + "\n")] } ?? [], interactive: true)
  }

  @Test(.enabled(if: Sandbox.unshare != nil, "unshare -n is not permitted here"))
  func noOnTheTerminalSendsNothingAndRecordsNothing() throws {
    let device = try Self.device()
    let refused = try Self.onTerminal(device, ["plan"], answer: "n")
    #expect(refused.status == 56, "\(refused.terminal)")
    #expect(refused.terminal.contains("203.0.113.7 is on the public network"), "\(refused.terminal)")
    #expect(refused.terminal.contains("1 tasks' titles"), "\(refused.terminal)")
    #expect(try Self.confirmedAt(device) is NSNull)
    #expect(try Self.outcomes(device) == [], "nothing was attempted, so nothing is logged")
  }

  @Test(.enabled(if: Sandbox.unshare != nil, "unshare -n is not permitted here"))
  func yesOnTheTerminalIsRecordedAndAskedOnce() throws {
    let device = try Self.device()
    let confirmed = try Self.onTerminal(device, ["plan"], answer: "y")
    // Confirmed, then sent into a namespace with no network: it cannot connect.
    #expect(confirmed.status == 69, "\(confirmed.terminal)")
    let time = try #require(try Self.confirmedAt(device) as? String)
    #expect(time.hasSuffix("Z"))
    #expect(try Self.outcomes(device) == ["unreachable"])
    // The second request asks nothing, even on a terminal.
    let again = try Self.onTerminal(device, ["ask", "What first?"], answer: nil)
    #expect(again.status == 69, "\(again.terminal)")
    #expect(!again.terminal.contains("[y/N]"))
    #expect(try Self.outcomes(device) == ["unreachable", "unreachable"])
  }

  @Test func withoutATerminalOrYesNothingIsSent() throws {
    let device = try Self.device()
    for arguments in [["plan"], ["ask", "Which first?"], ["provider", "test", "cloud"]] {
      let refused = try device.tasker(arguments)
      #expect(refused.status == 56, "\(arguments): \(refused.stderr)")
      #expect(refused.stderr.contains("run the command at a terminal to confirm, or add --yes"), "\(refused.stderr)")
    }
    #expect(try Self.confirmedAt(device) is NSNull)
    #expect(try Self.outcomes(device) == [])
  }

  @Test(.enabled(if: Sandbox.unshare != nil, "unshare -n is not permitted here"))
  func yesConfirmsForScripts() throws {
    let device = try Self.device()
    let result = try Binary(path: Binary.which("unshare")).run(
      (Sandbox.unshare ?? []) + ["--", Binary.tasker.path, "plan", "--yes", "--timeout", "5"],
      environment: device.environment)
    #expect(result.status == 69, "\(result.stderr)")
    #expect(try Self.confirmedAt(device) is String)
    #expect(try Self.outcomes(device) == ["unreachable"])
  }
}
