import FoundationEssentials

/// The user's quiet hours: a daily span of local time in which an
/// assistant's acting calls are queued for approval, never run.
///
/// Written `HH:MM-HH:MM` (24-hour, local time). The start is inside, the end
/// is outside; a span whose end is before its start wraps past midnight
/// (`22:00-07:00`). Equal start and end is refused: it would mean either
/// never or always.
public struct QuietHours: Equatable, Sendable, CustomStringConvertible {
  /// The first minute of the day inside the span (0...1439).
  public let start: Int
  /// The first minute of the day after the span (0...1439).
  public let end: Int

  /// Parses `HH:MM-HH:MM`.
  ///
  /// - Parameter text: the setting.
  /// - Throws: `GateError.invalidQuietHours` when it is not two valid
  ///   times, or they are equal.
  public init(_ text: String) throws {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, let start = Self.minute(of: parts[0]), let end = Self.minute(of: parts[1]), start != end
    else { throw GateError.invalidQuietHours(text) }
    self.start = start
    self.end = end
  }

  /// Whether a minute of the day falls inside the span.
  ///
  /// - Parameter minute: minutes since local midnight, 0...1439.
  /// - Returns: true inside quiet hours.
  public func contains(minute: Int) -> Bool {
    start < end ? (start <= minute && minute < end) : (minute >= start || minute < end)
  }

  /// Whether a moment falls inside the span, in a calendar's time zone.
  ///
  /// - Parameters:
  ///   - date: the moment.
  ///   - calendar: the calendar with the user's time zone.
  /// - Returns: true inside quiet hours.
  public func contains(_ date: Date, calendar: Calendar = .current) -> Bool {
    let parts = calendar.dateComponents([.hour, .minute], from: date)
    return contains(minute: (parts.hour ?? 0) * 60 + (parts.minute ?? 0))
  }

  /// The setting as written: `HH:MM-HH:MM`.
  public var description: String { "\(Self.clock(start))-\(Self.clock(end))" }

  private static func minute(of text: Substring) -> Int? {
    let fields = text.split(separator: ":", omittingEmptySubsequences: false)
    guard fields.count == 2, fields.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
      let hour = Int(fields[0]), let minute = Int(fields[1]), (0..<24).contains(hour), (0..<60).contains(minute)
    else { return nil }
    return hour * 60 + minute
  }

  private static func clock(_ minute: Int) -> String {
    let hour = minute / 60
    let rest = minute % 60
    return (hour < 10 ? "0" : "") + "\(hour):" + (rest < 10 ? "0" : "") + "\(rest)"
  }
}
