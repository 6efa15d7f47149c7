import Foundation
import TaskerTestSupport
import XCTest

final class TaskCommandTests: XCTestCase {
  func testAddListShowRoundTrip() throws {
    let device = try TestDevice()
    let added = try device.tasker([
      "add", "Buy milk", "--notes", "two litres", "--due", "2026-12-03", "--priority", "high",
    ])
    XCTAssertEqual(added.status, 0, added.stderr)
    XCTAssertEqual(added.stdoutText, "Added task 1: Buy milk\n")
    let listed = try device.tasker(["list"])
    XCTAssertEqual(listed.stdoutText, "1\t[ ] Buy milk  due 2026-12-03  !high\n")
    let shown = try device.tasker(["show", "1"])
    XCTAssertEqual(shown.status, 0, shown.stderr)
    XCTAssertTrue(shown.stdoutText.hasSuffix("\ntwo litres\n"), shown.stdoutText)
  }
}
