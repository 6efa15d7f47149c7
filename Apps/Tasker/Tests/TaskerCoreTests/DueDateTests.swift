import Testing

@testable import TaskerCore

/// `CalendarDate(parsingDue:today:)`: relative due dates counted from a
/// given local day, and `isOverdue(today:)`.
@Suite struct DueDateTests {
  /// Wednesday 2026-12-02.
  let wednesday = CalendarDate(checked: 2026, 12, 2)

  func due(_ text: String) throws -> String {
    try CalendarDate(parsingDue: text, today: wednesday).description
  }

  @Test func daysCountFromTheGivenToday() throws {
    #expect(wednesday.weekday == .wednesday)
    #expect(try due("today") == "2026-12-02")
    #expect(try due("tomorrow") == "2026-12-03")
    #expect(try due("yesterday") == "2026-12-01")
    #expect(try due("TODAY") == "2026-12-02", "ASCII case does not matter")
    #expect(try due("+0d") == "2026-12-02")
    #expect(try due("+3d") == "2026-12-05")
    #expect(try due("+30d") == "2027-01-01", "across a year")
    #expect(try due("+2w") == "2026-12-16")
    #expect(try due("2027-02-28") == "2027-02-28")
    #expect(try CalendarDate(parsingDue: "+1d", today: CalendarDate(checked: 2028, 2, 28)).description == "2028-02-29")
    #expect(try CalendarDate(parsingDue: "+1d", today: CalendarDate(checked: 2100, 2, 28)).description == "2100-03-01")
  }

  @Test func aWeekdayIsTheNextOneNeverToday() throws {
    #expect(try due("thursday") == "2026-12-03")
    #expect(try due("sunday") == "2026-12-06")
    #expect(try due("monday") == "2026-12-07")
    #expect(try due("tuesday") == "2026-12-08")
    #expect(try due("wednesday") == "2026-12-09", "today's weekday means a week later")
    #expect(try due("fri") == "2026-12-04")
    #expect(try due("Sat") == "2026-12-05")
    for day in Weekday.allCases {
      let date = try CalendarDate(parsingDue: day.name, today: wednesday)
      #expect(date.weekday == day)
      #expect(date > wednesday && date <= wednesday.adding(days: 7)!)
    }
  }

  @Test func everythingElseIsRefusedListingTheForms() {
    for text in [
      "", "now", "next friday", "+3", "3d", "-3d", "+-3d", "+3m", "+ 3d", "+3d ", " today", "mond", "2026-1-02",
      "02-12-2026", "+٣d", "tomorrow\n",
    ] {
      #expect(
        throws: TaskerError.invalidValue(
          field: "due date", reason: "'\(text)' is not a due date; use \(CalendarDate.dueDateForms)")
      ) { try CalendarDate(parsingDue: text, today: wednesday) }
    }
    #expect(CalendarDate.dueDateForms.contains("tomorrow") && CalendarDate.dueDateForms.contains("+Nw"))
    #expect(throws: TaskerError.invalidValue(field: "date", reason: "'2026-02-30' is not a day of the calendar")) {
      try CalendarDate(parsingDue: "2026-02-30", today: wednesday)
    }
  }

  @Test func aCountPastTheCalendarIsRefusedNotWrapped() throws {
    for text in ["+99999999999999999999999d", "+3000000d", "+9223372036854775807w"] {
      #expect(
        throws: TaskerError.invalidValue(field: "due date", reason: "'\(text)' is outside 0001-01-01 to 9999-12-31")
      ) {
        try CalendarDate(parsingDue: text, today: wednesday)
      }
    }
    #expect(try CalendarDate(parsingDue: "tomorrow", today: CalendarDate.latest.adding(days: -1)!) == .latest)
    #expect(throws: TaskerError.self) { try CalendarDate(parsingDue: "tomorrow", today: .latest) }
  }

  @Test func dayNumbersRoundTripAcrossTheWholeCalendar() throws {
    #expect(CalendarDate(checked: 1970, 1, 1).daysSinceEpoch == 0)
    #expect(CalendarDate(checked: 1970, 1, 1).weekday == .thursday)
    #expect(CalendarDate(checked: 2000, 3, 1).daysSinceEpoch == 11_017)
    #expect(CalendarDate(checked: 1, 1, 1).weekday == .monday)
    var date = CalendarDate.earliest
    var days = date.daysSinceEpoch
    // Every day of four centuries and the ends of the range, one by one.
    while date < CalendarDate(checked: 401, 1, 1) {
      let next = try #require(date.adding(days: 1))
      #expect(next.daysSinceEpoch == days + 1)
      #expect(next > date)
      #expect(try CalendarDate(parsing: next.description) == next)
      (date, days) = (next, days + 1)
    }
    #expect(CalendarDate(daysSinceEpoch: CalendarDate.latest.daysSinceEpoch + 1) == nil)
    #expect(CalendarDate(daysSinceEpoch: CalendarDate.earliest.daysSinceEpoch - 1) == nil)
    #expect(CalendarDate.latest.adding(days: Int.max) == nil)
  }

  @Test func localTodayIsTheLocalCivilDate() {
    let today = CalendarDate.localToday()
    #expect(today.year >= 2026)
    #expect((try? CalendarDate(parsing: today.description)) == today)
  }

  @Test func overdueMeansOpenAndDueBeforeToday() {
    func summary(_ due: CalendarDate?, _ status: TaskStatus) -> TaskSummary {
      TaskSummary(
        id: 1, title: "t", due: due, estimateMinutes: nil, priority: .none, energy: nil, status: status, contexts: "")
    }
    #expect(summary(wednesday.adding(days: -1), .open).isOverdue(today: wednesday))
    #expect(!summary(wednesday, .open).isOverdue(today: wednesday), "due today is not overdue")
    #expect(!summary(wednesday.adding(days: 1), .open).isOverdue(today: wednesday))
    #expect(!summary(wednesday.adding(days: -9), .done).isOverdue(today: wednesday))
    #expect(!summary(nil, .open).isOverdue(today: wednesday))
    let record = TaskRecord(
      id: 1, title: "t", notes: "", due: wednesday.adding(days: -1), estimateMinutes: nil, priority: .none,
      energy: nil, status: .open, created: 0, completed: nil, contexts: "")
    #expect(record.isOverdue(today: wednesday))
    var done = record
    done.status = .done
    #expect(!done.isOverdue(today: wednesday))
  }
}
