import Foundation
import TaskerTestSupport
import Testing

@Suite struct TaskCommandTests {
  @Test func addListShowRoundTrip() throws {
    let device = try TestDevice()
    let added = try device.tasker([
      "add", "Buy milk", "--notes", "two litres", "--due", "2026-12-03", "--priority", "high",
    ])
    #expect(added.status == 0, "\(added.stderr)")
    #expect(added.stdoutText == "Added task 1: Buy milk\n")
    let listed = try device.tasker(["list"])
    #expect(listed.stdoutText == "1\t[ ] Buy milk  due 2026-12-03  !high\n")
    let shown = try device.tasker(["show", "1"])
    #expect(shown.status == 0, "\(shown.stderr)")
    #expect(shown.stdoutText.hasSuffix("\ntwo litres\n"), "\(shown.stdoutText)")
  }
}
