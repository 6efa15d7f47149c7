import TaskSystem

/// How every command of the project writes a time: RFC 3339 in UTC to the
/// second in JSON (`2026-12-01T14:04:05Z`, docs/json-output.md), and the
/// local time with its offset on a terminal (`2026-12-01 15:04:05 +01:00`,
/// the time zone as the C library reads `TZ`). Formatted from TaskSystem's
/// `CivilTime`, without Foundation's date formatters.
public enum TimeStamp {
  /// RFC 3339 UTC, whole seconds (fractions are cut, never rounded up).
  public static func utc(_ seconds: Double) -> String {
    let time = CivilTime.utc(seconds)
    return "\(time.dateText)T\(time.secondText)Z"
  }

  /// RFC 3339 UTC of a whole number of seconds since 1970.
  public static func utc(seconds: Int64) -> String { utc(Double(seconds)) }

  /// The local time to the second with its UTC offset.
  public static func local(_ seconds: Double) -> String {
    let time = CivilTime.local(seconds)
    return "\(time.dateText) \(time.secondText) \(time.offsetText)"
  }

  /// The JSON value of a time: its RFC 3339 UTC string.
  public static func json(seconds: Int64) -> JSONValue { .string(utc(seconds: seconds)) }

  /// The JSON value of an optional time: its RFC 3339 UTC string, or null.
  public static func json(seconds: Int64?) -> JSONValue { seconds.map(json(seconds:)) ?? .null }
}
