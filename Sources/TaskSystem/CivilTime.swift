import Glibc

/// A calendar date and wall-clock time to the second, from the C library's
/// `gmtime_r` / `localtime_r`: what TaskKey shows for a time, without
/// Foundation's date formatters (linking them costs every `taskkey`
/// process its start-up budget, issue 14 goal 6).
public struct CivilTime: Equatable, Sendable {
  /// The year, e.g. 2026.
  public let year: Int
  /// The month, 1-12.
  public let month: Int
  /// The day of the month, 1-31.
  public let day: Int
  /// The hour, 0-23.
  public let hour: Int
  /// The minute, 0-59.
  public let minute: Int
  /// The second, 0-60.
  public let second: Int
  /// Seconds east of UTC (0 for UTC).
  public let utcOffsetSeconds: Int

  /// `seconds` since the Unix epoch in UTC, rounded down to the second.
  public static func utc(_ seconds: Double) -> CivilTime {
    var time = time_t(seconds.rounded(.down))
    var fields = tm()
    _ = gmtime_r(&time, &fields)
    return CivilTime(fields, offset: 0)
  }

  /// `seconds` since the Unix epoch in the process's local time zone (the
  /// `TZ` variable as the C library reads it, else /etc/localtime).
  public static func local(_ seconds: Double) -> CivilTime {
    var time = time_t(seconds.rounded(.down))
    var fields = tm()
    _ = localtime_r(&time, &fields)
    return CivilTime(fields, offset: Int(fields.tm_gmtoff))
  }

  /// The current moment in the process's local time zone (as `local(_:)`,
  /// read from `CLOCK_REALTIME` to the second): where "today" is for a
  /// user, for example the day `tasker add --due tomorrow` counts from.
  /// The time zone is read as the C library reads it, once per process
  /// (`TZ`, else /etc/localtime).
  public static func localNow() -> CivilTime {
    var now = timespec()
    _ = clock_gettime(CLOCK_REALTIME, &now)
    return local(Double(now.tv_sec))
  }

  private init(_ fields: tm, offset: Int) {
    year = Int(fields.tm_year) + 1900
    month = Int(fields.tm_mon) + 1
    day = Int(fields.tm_mday)
    hour = Int(fields.tm_hour)
    minute = Int(fields.tm_min)
    second = Int(fields.tm_sec)
    utcOffsetSeconds = offset
  }

  /// `yyyy-MM-dd`.
  public var dateText: String { "\(Self.pad(year, 4))-\(Self.pad(month))-\(Self.pad(day))" }

  /// `HH:mm`.
  public var minuteText: String { "\(Self.pad(hour)):\(Self.pad(minute))" }

  /// `HH:mm:ss`.
  public var secondText: String { "\(minuteText):\(Self.pad(second))" }

  /// The UTC offset as `+HH:MM` / `-HH:MM` (`+00:00` for UTC).
  public var offsetText: String {
    let magnitude = abs(utcOffsetSeconds) / 60
    return (utcOffsetSeconds < 0 ? "-" : "+") + "\(Self.pad(magnitude / 60)):\(Self.pad(magnitude % 60))"
  }

  /// `value` in decimal, zero-padded to `width` digits.
  public static func pad(_ value: Int, _ width: Int = 2) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
  }
}
