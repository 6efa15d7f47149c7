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
    XCTAssertTrue(try hours.contains(Date(timeIntervalSince1970: 23 * 3600), calendar: calendar))
    XCTAssertFalse(try hours.contains(Date(timeIntervalSince1970: 12 * 3600), calendar: calendar))
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

  /// 2026-03-29 is Berlin's spring change (02:00 CET becomes 03:00 CEST)
  /// and 2026-10-25 its autumn one (03:00 CEST becomes 02:00 CET): the same
  /// UTC minute is inside 22:00-07:00 on one side of a change and outside
  /// on the other, as Berlin's wall clock says.
  func testAZoneIsReadAcrossItsDaylightSavingChanges() throws {
    let hours = try QuietHours("22:00-07:00 Europe/Berlin")
    XCTAssertEqual(hours.zone, "Europe/Berlin")
    XCTAssertEqual(hours.description, "22:00-07:00 Europe/Berlin")
    var utc = Calendar(identifier: .gregorian)
    utc.timeZone = TimeZone(identifier: "UTC")!
    func at(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }
    // 05:30 UTC: 06:30 CET the day before the spring change, 07:30 CEST after.
    XCTAssertTrue(try hours.contains(at("2026-03-28T05:30:00Z"), calendar: utc))
    XCTAssertFalse(try hours.contains(at("2026-03-29T05:30:00Z"), calendar: utc))
    // 20:30 UTC: 21:30 CET before, 22:30 CEST after.
    XCTAssertFalse(try hours.contains(at("2026-03-28T20:30:00Z"), calendar: utc))
    XCTAssertTrue(try hours.contains(at("2026-03-29T20:30:00Z"), calendar: utc))
    // Autumn: 05:30 UTC is 07:30 CEST on the 24th, 06:30 CET on the 25th.
    XCTAssertFalse(try hours.contains(at("2026-10-24T05:30:00Z"), calendar: utc))
    XCTAssertTrue(try hours.contains(at("2026-10-25T05:30:00Z"), calendar: utc))
    // The repeated hour: 00:30 UTC is 02:30 CEST, 01:30 UTC is 02:30 CET;
    // both inside.
    XCTAssertTrue(try hours.contains(at("2026-10-25T00:30:00Z"), calendar: utc))
    XCTAssertTrue(try hours.contains(at("2026-10-25T01:30:00Z"), calendar: utc))
    // The caller's calendar does not matter once the setting names a zone.
    var tokyo = utc
    tokyo.timeZone = TimeZone(identifier: "Asia/Tokyo")!
    XCTAssertFalse(try hours.contains(at("2026-03-29T05:30:00Z"), calendar: tokyo))
  }

  func testPOSIXRuleStringsAreRefusedNotIgnored() {
    for rule in [
      "CET-1CEST,M3.5.0,M10.5.0/3", "<+0330>-3:30", ":Europe/Berlin", "JST-9", "EST+5EDT,M3.2.0/2,M11.1.0/2",
    ] {
      XCTAssertThrowsError(try QuietHours("22:00-07:00 " + rule), rule) { error in
        XCTAssertEqual(error as? GateError, .posixTimeZoneRule(rule))
      }
    }
  }

  func testUnknownOrTraversingZoneNamesAreRefused() {
    for name in ["Europe/Atlantis", "../../etc/passwd", "Europe/../Europe/Berlin", "", "Europe/", "Europe//Berlin"] {
      XCTAssertThrowsError(try QuietHours(span: "22:00-07:00", zone: name), name) { error in
        XCTAssertEqual(error as? GateError, .unknownTimeZone(name))
      }
    }
    XCTAssertNoThrow(try QuietHours(span: "22:00-07:00", zone: "UTC"), "a link in zoneinfo is a name too")
    XCTAssertNoThrow(try QuietHours(span: "22:00-07:00", zone: "EST5EDT"), "an IANA file that looks like a rule")
  }
}
