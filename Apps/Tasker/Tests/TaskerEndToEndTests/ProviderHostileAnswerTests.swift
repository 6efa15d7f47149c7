import Foundation
import TaskerTestSupport
import Testing

/// A hostile or broken provider cannot hurt: every bad answer of the
/// stand-in gives the exit code PLAN-SPEC names, changes nothing on disk
/// (`plan_order` untouched), prints nothing of what the provider said raw,
/// and leaves a log row with its outcome (issue 27).
@Suite struct ProviderHostileAnswerTests {
  /// One way for a provider to misbehave and what Tasker must make of it.
  struct Case: Sendable, CustomTestStringConvertible {
    let mode: String
    let exitCode: Int32
    let outcome: String
    /// The HTTP status the log row records; nil when the row's is not checked.
    let status: Int?
    var testDescription: String { mode }
  }

  static let planCases: [Case] = [
    Case(mode: "plan-unknown-id", exitCode: 60, outcome: "answer_refused", status: 200),
    Case(mode: "plan-repeated-id", exitCode: 60, outcome: "answer_refused", status: 200),
    Case(mode: "plan-not-json", exitCode: 60, outcome: "answer_refused", status: 200),
    Case(mode: "plan-extra-member", exitCode: 60, outcome: "answer_refused", status: 200),
    Case(mode: "plan-control-chars", exitCode: 60, outcome: "answer_refused", status: 200),
    Case(mode: "plan-truncated", exitCode: 60, outcome: "answer_refused", status: 200),
    Case(mode: "ask-text", exitCode: 60, outcome: "answer_refused", status: 200),
    Case(mode: "status-401", exitCode: 57, outcome: "key_rejected", status: 401),
    Case(mode: "status-429", exitCode: 58, outcome: "rate_limited", status: 429),
    Case(mode: "status-500", exitCode: 59, outcome: "provider_failed", status: 500),
    Case(mode: "redirect", exitCode: 69, outcome: "redirect_refused", status: nil),
    Case(mode: "huge", exitCode: 60, outcome: "too_large", status: nil),
    Case(mode: "slow", exitCode: 69, outcome: "timed_out", status: nil),
  ]

  static let askCases: [Case] = [
    Case(mode: "plan-truncated", exitCode: 60, outcome: "answer_refused", status: 200),
    Case(mode: "status-401", exitCode: 57, outcome: "key_rejected", status: 401),
    Case(mode: "status-429", exitCode: 58, outcome: "rate_limited", status: 429),
    Case(mode: "status-500", exitCode: 59, outcome: "provider_failed", status: 500),
    Case(mode: "redirect", exitCode: 69, outcome: "redirect_refused", status: nil),
    Case(mode: "huge", exitCode: 60, outcome: "too_large", status: nil),
    Case(mode: "slow", exitCode: 69, outcome: "timed_out", status: nil),
  ]

  /// A device whose four tasks were planned and applied once (orders 4, 3,
  /// 2, 1) through a stand-in that is then switched to `mode`.
  static func appliedDevice(then mode: String) throws -> (device: TestDevice, server: StandInProvider) {
    let device = try TestDevice()
    let server = try StandInProvider(mode: "plan-reverse")
    try device.addProvider("local", url: server.url)
    try device.addPlanningTasks()
    try device.succeed(["plan", "--today", planningDay, "--apply"])
    #expect(try device.planOrders() == [4, 3, 2, 1])
    try server.set(mode: mode, sleep: 10)
    return (device, server)
  }

  /// Checks what every refusal shares: the exit code, no plan printed, no
  /// raw control character from the answer, the server's one request, the
  /// redirect not followed, and the log row.
  func expectRefused(
    _ result: ProcessResult, _ refusal: Case, kind: String, device: TestDevice, server: StandInProvider,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    #expect(result.status == refusal.exitCode, "\(refusal.mode): \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, "\(result.stdoutText)", sourceLocation: sourceLocation)
    #expect(
      !result.stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" }, "\(result.stderr)",
      sourceLocation: sourceLocation)
    let requests = try server.requests()
    #expect(requests.last?.listener == "main", sourceLocation: sourceLocation)
    #expect(
      !requests.contains { $0.listener == "redirect-target" }, "no redirect followed", sourceLocation: sourceLocation)
    let call = try #require(try device.providerCalls().first, sourceLocation: sourceLocation)
    #expect(call["kind"] as? String == kind, sourceLocation: sourceLocation)
    #expect(call["outcome"] as? String == refusal.outcome, "\(call)", sourceLocation: sourceLocation)
    if let status = refusal.status {
      #expect(call["status"] as? Int == status, "\(call)", sourceLocation: sourceLocation)
    }
    if refusal.mode == "slow" {
      #expect(call["status"] is NSNull, "no status was received", sourceLocation: sourceLocation)
    }
  }

  @Test(arguments: planCases)
  func aBadPlanAnswerIsRefusedAndChangesNothing(_ refusal: Case) throws {
    let (device, server) = try Self.appliedDevice(then: refusal.mode)
    let before = try device.tableSnapshot(withoutPlanOrder: false)
    let started = Date()
    let result = try device.tasker(["plan", "--today", planningDay, "--apply", "--timeout", "2"])
    if refusal.mode == "slow" { #expect(Date().timeIntervalSince(started) < 8, "the timeout held") }
    try expectRefused(result, refusal, kind: "plan", device: device, server: server)
    #expect(try device.planOrders() == [4, 3, 2, 1], "plan_order untouched")
    #expect(try device.tableSnapshot(withoutPlanOrder: false) == before, "nothing changed on disk")
    #expect(try device.providerCalls().count == 2)
  }

  @Test(arguments: askCases)
  func aBadAskAnswerIsRefused(_ refusal: Case) throws {
    let (device, server) = try Self.appliedDevice(then: refusal.mode)
    let before = try device.tableSnapshot(withoutPlanOrder: false)
    let result = try device.tasker(["ask", "What first?", "--today", planningDay, "--timeout", "2"])
    try expectRefused(result, refusal, kind: "ask", device: device, server: server)
    #expect(try device.tableSnapshot(withoutPlanOrder: false) == before)
  }

  @Test(arguments: [
    Case(mode: "status-401", exitCode: 57, outcome: "key_rejected", status: 401),
    Case(mode: "status-500", exitCode: 59, outcome: "provider_failed", status: 500),
    Case(mode: "redirect", exitCode: 69, outcome: "redirect_refused", status: nil),
  ])
  func aBadTestAnswerIsRefused(_ refusal: Case) throws {
    let (device, server) = try Self.appliedDevice(then: refusal.mode)
    let result = try device.tasker(["provider", "test", "local", "--timeout", "2"])
    try expectRefused(result, refusal, kind: "test", device: device, server: server)
  }

  @Test func aTitleHoldingControlCharactersIsSentAsDataAndPrintedVisibly() throws {
    // A reason holding ESC is refused (above); a title holding it is the
    // user's own text: sent as data, printed visibly.
    let device = try TestDevice()
    let server = try StandInProvider(mode: "plan-reverse")
    try device.addProvider("local", url: server.url)
    try device.succeed(["add", "Red \u{1B}[31m alert"])
    let planned = try device.succeed(["plan", "--today", planningDay])
    #expect(!planned.stdout.contains(0x1B), "\(planned.stdoutText)")
    let step = "1. Red \\u{1B}[31m alert (#1) — reason for t1"
    #expect(planned.stdoutText.split(separator: "\n").contains { $0 == step }, "\(planned.stdoutText)")
    #expect(
      planned.stdoutText == "Plan from local: 1 of 1 open tasks\n" + step + "\n", "a heading, one line per planned task"
    )
    let request = try #require(try server.requests().first)
    #expect(request.bodyText.contains("Red \\\\u001b[31m alert"), "escaped twice: in USER, then in the body")
  }

  @Test func anUnreachableProviderExits69AndIsLogged() throws {
    let device = try TestDevice()
    var server: StandInProvider? = try StandInProvider(mode: "plan-reverse")
    let url = try #require(server?.url)
    server = nil
    try device.addProvider("local", url: url)
    try device.addPlanningTasks()
    let result = try device.tasker(["plan", "--today", planningDay, "--apply", "--timeout", "2"])
    #expect(result.status == 69, "\(result.stderr)")
    #expect(try device.planOrders() == [nil, nil, nil, nil])
    let call = try #require(try device.providerCalls().first)
    #expect(call["outcome"] as? String == "unreachable" && call["status"] is NSNull, "\(call)")
  }
}
