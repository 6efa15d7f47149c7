import TaskSystem

/// A day of the week, numbered as ISO 8601 does (Monday 1 … Sunday 7).
public enum Weekday: Int, Sendable, CaseIterable, Codable {
  /// Monday.
  case monday = 1
  /// Tuesday.
  case tuesday
  /// Wednesday.
  case wednesday
  /// Thursday.
  case thursday
  /// Friday.
  case friday
  /// Saturday.
  case saturday
  /// Sunday.
  case sunday

  /// The English name in lower case: `monday`.
  public var name: String {
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"][rawValue - 1]
  }

  /// The three-letter short form: `mon`.
  public var shortName: String { String(name.prefix(3)) }
}

extension CalendarDate {
  /// The first day a `CalendarDate` can hold: 0001-01-01.
  public static let earliest = CalendarDate(checked: 1, 1, 1)
  /// The last day a `CalendarDate` can hold: 9999-12-31.
  public static let latest = CalendarDate(checked: 9999, 12, 31)

  /// Today in the process's local time zone (`TZ`, else /etc/localtime),
  /// read through TaskSystem's `CivilTime.localNow()`: the day `today`,
  /// `tomorrow`, weekdays and `+3d` count from, and the day before which an
  /// open task is overdue.
  public static func localToday() -> CalendarDate {
    let now = CivilTime.localNow()
    return CalendarDate(checked: now.year, now.month, now.day)
  }

  /// The number of days from 1970-01-01 to this day (negative before it),
  /// in the proleptic Gregorian calendar.
  public var daysSinceEpoch: Int {
    // Howard Hinnant's days_from_civil: years start on 1 March, so the leap day is last.
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
    let yearOfEra = shiftedYear - era * 400
    let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The day `daysSinceEpoch` days after 1970-01-01.
  ///
  /// - Returns: nil outside `earliest ... latest`.
  public init?(daysSinceEpoch days: Int) {
    guard (Self.earliest.daysSinceEpoch...Self.latest.daysSinceEpoch).contains(days) else { return nil }
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    self.init(checked: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// The day `days` days later (earlier when negative).
  ///
  /// - Returns: nil when that day is outside `earliest ... latest`.
  public func adding(days: Int) -> CalendarDate? {
    let (sum, overflow) = daysSinceEpoch.addingReportingOverflow(days)
    return overflow ? nil : CalendarDate(daysSinceEpoch: sum)
  }

  /// The day of the week.
  public var weekday: Weekday {
    // 1970-01-01 was a Thursday (ISO 4).
    let offset = ((daysSinceEpoch % 7) + 7 + 3) % 7
    return Weekday(rawValue: offset + 1)!
  }

  /// The forms `init(parsingDue:today:)` accepts, for help text and errors.
  public static let dueDateForms =
    "YYYY-MM-DD, today, tomorrow, yesterday, a weekday (monday … sunday or mon … sun: the next one, never today), "
    + "+Nd or +Nw (N days or weeks from today)"

  /// Parses a due date as a user types it, counting from `today` (the
  /// caller's local day, `CalendarDate.localToday()`; a parameter so that
  /// the result depends on nothing else):
  ///
  /// - `YYYY-MM-DD`: that day (as `init(parsing:)`);
  /// - `today`, `tomorrow`, `yesterday`;
  /// - a weekday, `monday` … `sunday` or `mon` … `sun`: the next such day
  ///   after today, never today itself (`friday` on a Friday is a week
  ///   later);
  /// - `+Nd`, `+Nw`: N days or N weeks after today (`+0d` is today), N
  ///   decimal digits only.
  ///
  /// Words are matched without regard to ASCII case; nothing else is
  /// accepted (no spaces, no `-3d`, no `next friday`).
  ///
  /// - Parameters:
  ///   - text: what the user typed.
  ///   - today: the day relative forms count from.
  /// - Throws: `TaskerError.invalidValue` with field `due date`, whose
  ///   reason lists the accepted forms (`dueDateForms`); for text shaped
  ///   `YYYY-MM-DD` that is no day of the calendar, the error of
  ///   `init(parsing:)`; a relative day outside 0001-01-01 to 9999-12-31 is
  ///   refused too.
  public init(parsingDue text: String, today: CalendarDate) throws {
    let word = ASCIIText.lowercased(text)
    if let days = Self.relativeDays(word, today: today) {
      guard let date = today.adding(days: days) else {
        throw TaskerError.invalidValue(
          field: "due date", reason: "'\(text)' is outside \(Self.earliest) to \(Self.latest)")
      }
      self = date
      return
    }
    let utf8 = Array(text.utf8)
    if utf8.count == 10, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-") {
      self = try CalendarDate(parsing: text)
      return
    }
    throw TaskerError.invalidValue(
      field: "due date", reason: "'\(text)' is not a due date; use \(Self.dueDateForms)")
  }

  /// The largest N of `+Nd` counted exactly (more days than the calendar
  /// holds, so a larger N is refused as past its end, never wrapped).
  static let relativeDayCap = 10_000_000

  /// The offset in days from `today` that a relative form names, or nil
  /// when `word` (ASCII lower-cased) is none.
  private static func relativeDays(_ word: String, today: CalendarDate) -> Int? {
    switch word {
    case "today": return 0
    case "tomorrow": return 1
    case "yesterday": return -1
    default: break
    }
    if let target = Weekday.allCases.first(where: { $0.name == word || $0.shortName == word }) {
      let ahead = (target.rawValue - today.weekday.rawValue + 7) % 7
      return ahead == 0 ? 7 : ahead
    }
    let bytes = Array(word.utf8)
    guard bytes.count >= 3, bytes.first == UInt8(ascii: "+"), let unit = bytes.last,
      unit == UInt8(ascii: "d") || unit == UInt8(ascii: "w")
    else { return nil }
    var count = 0
    for byte in bytes.dropFirst().dropLast() {
      guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
      count = min(count * 10 + Int(byte - UInt8(ascii: "0")), relativeDayCap)
    }
    return unit == UInt8(ascii: "w") ? count * 7 : count
  }
}

extension TaskSummary {
  /// Whether the task is open and its due day is before `today` (the
  /// caller's local day, `CalendarDate.localToday()`). A task due today is
  /// not overdue; a done or undated task never is.
  public func isOverdue(today: CalendarDate) -> Bool {
    status == .open && due.map { $0 < today } == true
  }
}

extension TaskRecord {
  /// Whether the task is open and its due day is before `today`, as
  /// `TaskSummary.isOverdue(today:)`.
  public func isOverdue(today: CalendarDate) -> Bool {
    status == .open && due.map { $0 < today } == true
  }
}
