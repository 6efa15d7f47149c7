import CommandKit
import FoundationEssentials
import TaskSystem

/// How times are shown: in the local time zone (`TZ`, as the C library
/// reads it) to a person at a terminal, ISO 8601 UTC in JSON and when
/// standard output is piped. Formatted by hand from `CivilTime`, not with
/// Foundation's date formatters, whose code costs every process start-up
/// time (issue 14, goal 6).
struct TimeText {
  /// Local time for a terminal, else UTC.
  let local: Bool

  /// The style for `streams`: local when standard output is a terminal.
  init(_ streams: StandardStreams) {
    local = streams.outputIsTerminal
  }

  /// A time to the second: `2026-12-01 15:04:05 +01:00`, or ISO 8601 UTC.
  func show(_ date: Date) -> String {
    guard local else { return isoTime(date) }
    return TimeStamp.local(date.timeIntervalSince1970)
  }

  /// A time to the minute: `2026-12-01 15:04 +01:00`, or `2026-12-01T14:04Z`.
  func showMinute(_ date: Date) -> String {
    guard local else { return String(isoTime(date).dropLast(4)) + "Z" }
    let time = CivilTime.local(date.timeIntervalSince1970)
    return "\(time.dateText) \(time.minuteText) \(time.offsetText)"
  }
}

/// ISO 8601 in UTC, whole seconds (`2026-12-01T14:04:05Z`): what JSON
/// output carries.
func isoTime(_ date: Date) -> String {
  TimeStamp.utc(date.timeIntervalSince1970)
}
