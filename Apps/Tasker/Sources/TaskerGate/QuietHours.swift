import FoundationEssentials
import TaskSystem

/// The user's quiet hours: a daily span of wall-clock time, in the zone the
/// user set, in which an assistant's acting calls are queued for approval,
/// never run.
///
/// Written `HH:MM-HH:MM ZONE` (24-hour; ZONE an IANA name such as
/// `Europe/Berlin` that /usr/share/zoneinfo holds). The start is inside,
/// the end is outside; a span whose end is before its start wraps past
/// midnight (`22:00-07:00`). Equal start and end is refused: it would mean
/// either never or always. A setting without a zone (written by an earlier
/// Tasker) is read in the calendar the caller gives, the process's zone.
/// POSIX TZ rule strings (`CET-1CEST,M3.5.0,M10.5.0/3`) are refused, not
/// read as something else.
public struct QuietHours: Equatable, Sendable, CustomStringConvertible {
  /// The first minute of the day inside the span (0...1439).
  public let start: Int
  /// The first minute of the day after the span (0...1439).
  public let end: Int
  /// The IANA zone the span is read in; nil for the caller's calendar.
  public let zone: String?

  /// Where IANA zone files are.
  public static let zoneDirectory = "/usr/share/zoneinfo"

  /// Parses `HH:MM-HH:MM` or `HH:MM-HH:MM ZONE`.
  ///
  /// - Parameter text: the setting.
  /// - Throws: `GateError.invalidQuietHours` when the span is not two
  ///   valid, different times; `.posixTimeZoneRule` or `.unknownTimeZone`
  ///   when the zone is not an IANA name the system holds.
  public init(_ text: String) throws {
    let words = text.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
    try self.init(span: String(words[0]), zone: words.count == 2 ? String(words[1]) : nil, setting: text)
  }

  /// A span (`HH:MM-HH:MM`) read in `zone`.
  ///
  /// - Throws: as `init(_:)`.
  public init(span: String, zone: String?) throws {
    try self.init(span: span, zone: zone, setting: span)
  }

  private init(span: String, zone: String?, setting: String) throws {
    let parts = span.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, let start = Self.minute(of: parts[0]), let end = Self.minute(of: parts[1]), start != end
    else { throw GateError.invalidQuietHours(setting) }
    self.start = start
    self.end = end
    if let zone { _ = try Self.timeZone(named: zone) }
    self.zone = zone
  }

  /// The time zone an IANA name names, checked against the system's zone
  /// files.
  ///
  /// - Parameter name: such as `Europe/Berlin` or `UTC`.
  /// - Returns: the zone.
  /// - Throws: `GateError.posixTimeZoneRule` for a POSIX TZ rule string,
  ///   `.unknownTimeZone` for any other name /usr/share/zoneinfo does not
  ///   hold as a file.
  public static func timeZone(named name: String) throws -> TimeZone {
    let components = name.split(separator: "/", omittingEmptySubsequences: false)
    let isName = name.utf8.count <= 64 && components.allSatisfy(isZoneNamePart)
    let kind: FileStatus.Kind? = isName ? (try? FileStatus.of(zoneDirectory + "/" + name))?.kind : nil
    if kind == .regular || kind == .symlink, let zone = TimeZone(identifier: name) {
      return zone
    }
    if looksLikePOSIXRule(name) { throw GateError.posixTimeZoneRule(name) }
    throw GateError.unknownTimeZone(name)
  }

  /// Whether a minute of the day falls inside the span.
  ///
  /// - Parameter minute: minutes since midnight, 0...1439.
  /// - Returns: true inside quiet hours.
  public func contains(minute: Int) -> Bool {
    start < end ? (start <= minute && minute < end) : (minute >= start || minute < end)
  }

  /// Whether a moment falls inside the span: in the span's zone, or in the
  /// calendar's when the setting names none.
  ///
  /// - Parameters:
  ///   - date: the moment.
  ///   - calendar: the calendar for a setting without a zone.
  /// - Returns: true inside quiet hours.
  /// - Throws: the errors of `timeZone(named:)` when the zone no longer
  ///   resolves (the caller then treats quiet hours as undecidable).
  public func contains(_ date: Date, calendar: Calendar = .current) throws -> Bool {
    var reading = calendar
    if let zone { reading.timeZone = try Self.timeZone(named: zone) }
    let parts = reading.dateComponents([.hour, .minute], from: date)
    return contains(minute: (parts.hour ?? 0) * 60 + (parts.minute ?? 0))
  }

  /// The span as written: `HH:MM-HH:MM`.
  public var span: String { "\(Self.clock(start))-\(Self.clock(end))" }

  /// The setting as written: `HH:MM-HH:MM`, then ` ZONE` when it has one.
  public var description: String { span + (zone.map { " " + $0 } ?? "") }

  /// A POSIX TZ string has a digit or sign in its offset, a comma before
  /// its rules, angle brackets or a leading colon; no IANA name has a
  /// comma, and the IANA names that look like rules (`EST5EDT`) were
  /// accepted above as files.
  private static func looksLikePOSIXRule(_ text: String) -> Bool {
    text.hasPrefix(":") || text.contains(",") || text.contains("<")
      || (text.first?.isLetter == true && text.contains { $0.isNumber } && !text.contains("/"))
  }

  /// One part of an IANA name: letters, digits, `_`, `-` and `+`, not
  /// empty, never `.` or `..`.
  private static func isZoneNamePart(_ part: Substring) -> Bool {
    guard !part.isEmpty, part != ".", part != ".." else { return false }
    return part.unicodeScalars.allSatisfy { scalar in
      scalar.isASCII
        && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_-+".unicodeScalars.contains(scalar))
    }
  }

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
