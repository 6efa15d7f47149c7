import Foundation

/// How times are shown: in the local time zone (`TZ`) to a person at a
/// terminal, ISO 8601 UTC in JSON and when standard output is piped.
struct TimeText {
  /// Local time for a terminal, else UTC.
  let local: TimeZone?

  /// The style for `streams`: local when standard output is a terminal.
  init(_ streams: StandardStreams) {
    guard streams.outputIsTerminal else {
      local = nil
      return
    }
    local =
      streams.environment["TZ"].flatMap { TimeZone(identifier: $0.hasPrefix(":") ? String($0.dropFirst()) : $0) }
      ?? TimeZone.current
  }

  /// A time to the second: `2026-12-01 15:04:05 +01:00`, or ISO 8601 UTC.
  func show(_ date: Date) -> String {
    show(date, format: "yyyy-MM-dd HH:mm:ss xxx")
  }

  /// A time to the minute: `2026-12-01 15:04 +01:00`, or `2026-12-01T14:04Z`.
  func showMinute(_ date: Date) -> String {
    guard local != nil else { return String(isoTime(date).dropLast(4)) + "Z" }
    return show(date, format: "yyyy-MM-dd HH:mm xxx")
  }

  private func show(_ date: Date, format: String) -> String {
    guard let local else { return isoTime(date) }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = local
    formatter.dateFormat = format
    return formatter.string(from: date)
  }
}

/// ISO 8601 in UTC, whole seconds: what JSON output carries.
func isoTime(_ date: Date) -> String {
  let formatter = ISO8601DateFormatter()
  formatter.timeZone = TimeZone(identifier: "UTC")
  return formatter.string(from: date)
}
