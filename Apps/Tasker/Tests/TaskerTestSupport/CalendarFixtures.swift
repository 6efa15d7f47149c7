import Foundation

extension Calendar {
  /// The Gregorian calendar in UTC, for tests whose clock is fixed: its
  /// days, and so the gate's windows, start at 00:00 UTC whatever the
  /// machine's time zone.
  public static var gregorianUTC: Calendar {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar
  }
}
