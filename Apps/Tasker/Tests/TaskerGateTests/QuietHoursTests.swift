import TaskerGate
import XCTest

final class QuietHoursTests: XCTestCase {
  func testASpanWithinOneDay() throws {
    let hours = try QuietHours("09:30-17:00")
    XCTAssertFalse(hours.contains(minute: 9 * 60 + 29))
    XCTAssertTrue(hours.contains(minute: 9 * 60 + 30))
    XCTAssertTrue(hours.contains(minute: 16 * 60 + 59))
    XCTAssertFalse(hours.contains(minute: 17 * 60))
    XCTAssertEqual(hours.description, "09:30-17:00")
  }

  func testASpanPastMidnightWraps() throws {
    let hours = try QuietHours("22:00-07:00")
    XCTAssertTrue(hours.contains(minute: 23 * 60))
    XCTAssertTrue(hours.contains(minute: 0))
    XCTAssertTrue(hours.contains(minute: 6 * 60 + 59))
    XCTAssertFalse(hours.contains(minute: 7 * 60))
    XCTAssertFalse(hours.contains(minute: 21 * 60 + 59))
  }

  func testADateIsReadInTheCalendarsTimeZone() throws {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let hours = try QuietHours("22:00-07:00")
    XCTAssertTrue(hours.contains(Date(timeIntervalSince1970: 23 * 3600), calendar: calendar))
    XCTAssertFalse(hours.contains(Date(timeIntervalSince1970: 12 * 3600), calendar: calendar))
  }

  func testMalformedSpansAreRefused() {
    for text in [
      "", "22:00", "22:00-22:00", "24:00-07:00", "22:60-07:00", "2:00-07:00", "22:00-07:00-08:00", "+1:00-07:00",
      "22:00 - 07:00", "٢٢:00-07:00",
    ] {
      XCTAssertThrowsError(try QuietHours(text), text) { error in
        XCTAssertEqual(error as? GateError, .invalidQuietHours(text))
      }
    }
  }
}
