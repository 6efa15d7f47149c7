import Foundation
import TaskerTestSupport
import Testing

/// `tasker gate quiet-hours SPAN --zone ZONE`: the span is read in the
/// zone the user set, not the gate process's (issue 23).
@Suite struct GateQuietHoursTests {
  /// `HH:MM` of `date` in `zone`.
  private func clock(_ date: Date, _ zone: String) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: zone)!
    let parts = calendar.dateComponents([.hour, .minute], from: date)
    return String(format: "%02d:%02d", parts.hour!, parts.minute!)
  }

  @Test func aSpanIsReadInItsZoneNotTheGatesZone() throws {
    let device = try TestDevice()
    // A span around now in UTC+14, which is ten hours away from now in UTC.
    let now = Date()
    let span =
      clock(now.addingTimeInterval(-3600), "Pacific/Kiritimati") + "-"
      + clock(now.addingTimeInterval(3600), "Pacific/Kiritimati")
    let set = try device.tasker(["gate", "quiet-hours", span, "--zone", "Pacific/Kiritimati", "--json"])
    #expect(set.status == 0, "\(set.stderr)")
    let stored = try #require(set.json() as? [String: Any])
    #expect(stored["zone"] as? String == "Pacific/Kiritimati")
    let minted = try #require(
      try device.taskkey(["mint", "--name", "planner", "--trust", "standard", "--grant", "tasks:write", "--json"])
        .json() as? [String: Any])
    var environment = device.environment
    environment["TASKER_ASSISTANT_KEY"] = try #require(minted["key"] as? String)
    environment["TZ"] = "UTC"
    let session = try LineProcess(.tasker, ["mcp"], environment: environment)
    try session.initializeMCP()
    let queued = try session.callTool("add_task", ["title": "at night in Kiritimati"])
    #expect(queued["status"] as? String == "queued", "\(queued)")
    #expect(session.finish().status == 0)

    let utc = try device.tasker(["gate", "quiet-hours", span, "--zone", "UTC"])
    #expect(utc.status == 0, "\(utc.stderr)")
    let again = try LineProcess(.tasker, ["mcp"], environment: environment)
    try again.initializeMCP()
    let ran = try again.callTool("add_task", ["title": "daytime in UTC"])
    #expect(ran["status"] as? String != "queued", "\(ran)")
    #expect(again.finish().status == 0)
  }

  @Test func theDefaultZoneIsTheSystemsAndRuleStringsAreRefused() throws {
    let device = try TestDevice()
    var environment = device.environment
    environment["TZ"] = "Europe/Berlin"
    let set = try Binary.tasker.run(["gate", "quiet-hours", "22:00-07:00", "--json"], environment: environment)
    #expect(set.status == 0, "\(set.stderr)")
    #expect((try set.json() as? [String: Any])?["zone"] as? String == "Europe/Berlin")
    environment["TZ"] = "CET-1CEST,M3.5.0,M10.5.0/3"
    let rule = try Binary.tasker.run(["gate", "quiet-hours", "21:00-07:00"], environment: environment)
    #expect(rule.status == 65)
    #expect(rule.stderr.contains("POSIX TZ rule string"), "\(rule.stderr)")
    let named = try device.tasker(["gate", "quiet-hours", "21:00-07:00", "--zone", "Europe/Atlantis"])
    #expect(named.status == 65)
    #expect(named.stderr.contains("unknown time zone"))
    let shown = try #require(try device.tasker(["gate", "show", "--json"]).json() as? [String: Any])
    #expect(shown["quiet_hours"] as? String == "22:00-07:00 Europe/Berlin", "a refused zone changed nothing")
  }
}
