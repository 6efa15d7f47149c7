import FoundationEssentials

/// A calendar day without a time or time zone, written `YYYY-MM-DD`.
public struct CalendarDate: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
  /// The year, 1 to 9999.
  public let year: Int
  /// The month, 1 to 12.
  public let month: Int
  /// The day of the month, 1 to the month's length.
  public let day: Int

  /// Parses `YYYY-MM-DD`.
  ///
  /// - Throws: `TaskerError.invalidValue` for any other text or a day the
  ///   calendar does not have (for example 2026-02-30).
  public init(parsing text: String) throws {
    // By bytes: this runs once per row of every listing.
    var utf8 = Array(text.utf8)
    guard utf8.count == 10, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-") else {
      throw TaskerError.invalidValue(field: "date", reason: "'\(text)' is not YYYY-MM-DD")
    }
    utf8[4] = UInt8(ascii: "0")
    utf8[7] = UInt8(ascii: "0")
    var digits = [Int]()
    digits.reserveCapacity(10)
    for byte in utf8 {
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
        throw TaskerError.invalidValue(field: "date", reason: "'\(text)' is not YYYY-MM-DD")
      }
      digits.append(Int(byte - UInt8(ascii: "0")))
    }
    let year = digits[0] * 1000 + digits[1] * 100 + digits[2] * 10 + digits[3]
    let month = digits[5] * 10 + digits[6]
    let day = digits[8] * 10 + digits[9]
    guard year >= 1, (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day) else {
      throw TaskerError.invalidValue(field: "date", reason: "'\(text)' is not a day of the calendar")
    }
    self.year = year
    self.month = month
    self.day = day
  }

  /// Today in the local time zone.
  public static func today(now: Date = Date(), timeZone: TimeZone = .current) -> CalendarDate {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    let parts = calendar.dateComponents([.year, .month, .day], from: now)
    return CalendarDate(checked: parts.year!, parts.month!, parts.day!)
  }

  init(checked year: Int, _ month: Int, _ day: Int) {
    self.year = year
    self.month = month
    self.day = day
  }

  static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  /// `YYYY-MM-DD`.
  public var description: String {
    let zero = UInt8(ascii: "0")
    let bytes: [UInt8] = [
      zero + UInt8(year / 1000 % 10), zero + UInt8(year / 100 % 10), zero + UInt8(year / 10 % 10),
      zero + UInt8(year % 10), UInt8(ascii: "-"), zero + UInt8(month / 10), zero + UInt8(month % 10),
      UInt8(ascii: "-"), zero + UInt8(day / 10), zero + UInt8(day % 10),
    ]
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Earlier days sort first.
  public static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
    (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
  }

  /// Encodes as the `YYYY-MM-DD` string.
  public func encode(to encoder: Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }

  /// Decodes from a `YYYY-MM-DD` string.
  ///
  /// - Throws: `DecodingError` or `TaskerError.invalidValue`.
  public init(from decoder: Decoder) throws {
    try self.init(parsing: try decoder.singleValueContainer().decode(String.self))
  }
}

/// How important a task is.
public enum Priority: Int, Sendable, CaseIterable, Comparable {
  /// Not set.
  case none = 0
  /// Low.
  case low = 1
  /// Medium.
  case medium = 2
  /// High.
  case high = 3

  /// Parses `none`, `low`, `medium` or `high`.
  ///
  /// - Throws: `TaskerError.invalidValue` for anything else.
  public init(parsing text: String) throws { self = try Self.named(text, field: "priority") }

  /// The word for the level.
  public var name: String { ["none", "low", "medium", "high"][rawValue] }

  /// Lower levels sort first.
  public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How much energy a task takes.
public enum Energy: Int, Sendable, CaseIterable {
  /// Low energy.
  case low = 1
  /// Medium energy.
  case medium = 2
  /// High energy.
  case high = 3

  /// Parses `low`, `medium` or `high`.
  ///
  /// - Throws: `TaskerError.invalidValue` for anything else.
  public init(parsing text: String) throws { self = try Self.named(text, field: "energy") }

  /// The word for the level.
  public var name: String { ["", "low", "medium", "high"][rawValue] }
}

/// Whether a task is still to do.
public enum TaskStatus: String, Sendable, Codable {
  /// Still to do.
  case open
  /// Completed.
  case done
}

/// A task with its notes opened: what `show` displays.
public struct TaskRecord: Sendable, Equatable, Codable {
  /// The task's id; never reused after a delete.
  public var id: Int64
  /// The title, stored plain.
  public var title: String
  /// The note text, opened (sealed in the database when encryption is on).
  public var notes: String
  /// The due day, if any.
  public var due: CalendarDate?
  /// The estimate in minutes, if any.
  public var estimateMinutes: Int?
  /// The priority.
  public var priority: Priority
  /// The energy level, if set.
  public var energy: Energy?
  /// Open or done.
  public var status: TaskStatus
  /// When the task was made, whole seconds since 1970.
  public var created: Int64
  /// When it was completed, if done.
  public var completed: Int64?
  /// Contexts and tags as free text, stored plain (for example `@home errands`).
  public var contexts: String
}

/// A task without its notes: what `list` displays, read without any key.
public struct TaskSummary: Sendable, Equatable, Codable {
  /// The task's id.
  public var id: Int64
  /// The title.
  public var title: String
  /// The due day, if any.
  public var due: CalendarDate?
  /// The estimate in minutes, if any.
  public var estimateMinutes: Int?
  /// The priority.
  public var priority: Priority
  /// The energy level, if set.
  public var energy: Energy?
  /// Open or done.
  public var status: TaskStatus
  /// Contexts and tags as free text.
  public var contexts: String
  /// The task's place in the applied plan (`tasker plan --apply`), or nil.
  public var planOrder: Int? = nil
}

/// The fields of a new task. Only the title is required.
public struct TaskDraft: Sendable, Equatable {
  /// The title; must not be empty.
  public var title: String
  /// The note text (sealed before it is written when encryption is on).
  public var notes: String = ""
  /// The due day.
  public var due: CalendarDate?
  /// The estimate in minutes.
  public var estimateMinutes: Int?
  /// The priority.
  public var priority: Priority = .none
  /// The energy level.
  public var energy: Energy?
  /// Contexts and tags as free text.
  public var contexts: String = ""

  /// A draft with a title and the other fields at their defaults.
  public init(title: String) {
    self.title = title
  }
}

/// Changes to a task: nil leaves a field as it is; `.some(nil)` clears an
/// optional field.
public struct TaskChanges: Sendable, Equatable {
  /// A new title.
  public var title: String?
  /// New note text.
  public var notes: String?
  /// A new due day, or `.some(nil)` to clear it.
  public var due: CalendarDate??
  /// A new estimate, or `.some(nil)` to clear it.
  public var estimateMinutes: Int??
  /// A new priority.
  public var priority: Priority?
  /// A new energy level, or `.some(nil)` to clear it.
  public var energy: Energy??
  /// New contexts.
  public var contexts: String?

  /// No changes.
  public init() {}

  /// Whether nothing would change.
  public var isEmpty: Bool { self == TaskChanges() }
}

/// A page with its body opened.
public struct Page: Sendable, Equatable, Codable {
  /// The page's id; never reused after a delete.
  public var id: Int64
  /// The title, stored plain.
  public var title: String
  /// The body, opened (sealed in the database when encryption is on).
  public var body: String
  /// When the page was made, whole seconds since 1970.
  public var created: Int64
  /// When it last changed, whole seconds since 1970.
  public var updated: Int64
}

/// A page without its body.
public struct PageSummary: Sendable, Equatable, Codable {
  /// The page's id.
  public var id: Int64
  /// The title.
  public var title: String
  /// When it last changed, whole seconds since 1970.
  public var updated: Int64
}

/// A level written as its word in JSON (`"high"`), never as a number.
public protocol NamedLevel: Codable, CaseIterable {
  /// The word for the level.
  var name: String { get }
  /// Parses the word.
  init(parsing text: String) throws
}

extension NamedLevel {
  /// The level whose word is `text`.
  ///
  /// - Throws: `TaskerError.invalidValue` for `field`, listing the words
  ///   allowed ("'x' is not low, medium or high").
  static func named(_ text: String, field: String) throws -> Self {
    if let value = allCases.first(where: { $0.name == text }) { return value }
    let words = allCases.map(\.name)
    let allowed = words.dropLast().joined(separator: ", ") + " or " + (words.last ?? "")
    throw TaskerError.invalidValue(field: field, reason: "'\(text)' is not \(allowed)")
  }

  /// Encodes the word.
  func encodeName(to encoder: Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(name)
  }

  /// Decodes the word.
  static func decodeName(from decoder: Decoder) throws -> Self {
    try Self(parsing: try decoder.singleValueContainer().decode(String.self))
  }
}

extension Priority: NamedLevel {
  /// Encodes the word (`"high"`).
  public func encode(to encoder: Encoder) throws { try encodeName(to: encoder) }

  /// Decodes the word.
  ///
  /// - Throws: `DecodingError`, `TaskerError.invalidValue`.
  public init(from decoder: Decoder) throws { self = try Self.decodeName(from: decoder) }
}

extension Energy: NamedLevel {
  /// Encodes the word (`"low"`).
  public func encode(to encoder: Encoder) throws { try encodeName(to: encoder) }

  /// Decodes the word.
  ///
  /// - Throws: `DecodingError`, `TaskerError.invalidValue`.
  public init(from decoder: Decoder) throws { self = try Self.decodeName(from: decoder) }
}
