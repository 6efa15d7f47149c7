/// One task as a planning provider sees it: exactly six fields, none of
/// which can carry notes, contexts, attachments or other free text beyond
/// the title.
///
/// The field list is held in place at compile time twice over: `encode(to:)`
/// switches exhaustively over `CodingKeys.allCases`, so a new key that is
/// not encoded on purpose does not compile; and the `Decodable` conformance
/// is synthesised from the same keys, so a stored property without a key
/// (and without a default value) does not compile either. A test compares
/// the stored properties (through `Mirror`) with the keys for the one case
/// left: a property with a default value.
public struct PlanCandidate: Sendable, Equatable, Codable {
  /// The task's title.
  public let title: String
  /// The estimate in minutes, if set.
  public let estimateMinutes: Int?
  /// The due day, if set.
  public let due: CalendarDate?
  /// The priority.
  public let priority: Priority
  /// The energy level, if set.
  public let energy: Energy?
  /// Whether the due day is before the planning day.
  public let overdue: Bool

  /// The six fields, in the order they are encoded.
  public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
    /// `title`.
    case title
    /// `estimate_minutes`.
    case estimateMinutes = "estimate_minutes"
    /// `due` (`YYYY-MM-DD`).
    case due
    /// `priority` (`none`, `low`, `medium`, `high`).
    case priority
    /// `energy` (`low`, `medium`, `high`).
    case energy
    /// `overdue`.
    case overdue
  }

  /// A candidate from its six fields.
  public init(
    title: String, estimateMinutes: Int?, due: CalendarDate?, priority: Priority, energy: Energy?, overdue: Bool
  ) {
    self.title = title
    self.estimateMinutes = estimateMinutes
    self.due = due
    self.priority = priority
    self.energy = energy
    self.overdue = overdue
  }

  /// Encodes the six fields, each by an exhaustive switch over the keys;
  /// absent optional fields are `null`.
  public func encode(to encoder: Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    for key in CodingKeys.allCases {
      switch key {
      case .title: try container.encode(title, forKey: key)
      case .estimateMinutes: try container.encode(estimateMinutes, forKey: key)
      case .due: try container.encode(due, forKey: key)
      case .priority: try container.encode(priority, forKey: key)
      case .energy: try container.encode(energy, forKey: key)
      case .overdue: try container.encode(overdue, forKey: key)
      }
    }
  }
}

/// What Tasker gives a planning provider: the open tasks, each reduced to a
/// `PlanCandidate`, with the database id of each kept beside it on this
/// device. Built from the six plain columns and the id only; notes,
/// contexts and attachments are never read to make it.
///
/// The ids let a plan be mapped back to tasks (`tasker plan`, `plan-context
/// --json`); a request to a provider is built from `candidates` alone and
/// labels them per request, so no database id leaves the device.
public struct PlanContext: Sendable, Equatable {
  /// The open tasks, by due day (undated last), then priority, then id.
  public let candidates: [PlanCandidate]
  /// The id of each candidate's task, in the same order.
  public let taskIDs: [Int64]

  /// A context of `candidates`, whose tasks have the ids `taskIDs`.
  ///
  /// - Precondition: both have the same count.
  public init(candidates: [PlanCandidate], taskIDs: [Int64]) {
    precondition(candidates.count == taskIDs.count, "one task id per candidate")
    self.candidates = candidates
    self.taskIDs = taskIDs
  }
}

extension TaskStore {
  /// The plan context of the open tasks as of `today`. Needs no key.
  ///
  /// - Parameters:
  ///   - today: the planning day; a task due before it is overdue.
  ///   - limit: at most this many candidates.
  /// - Throws: `TaskerError.database`.
  public func planContext(today: CalendarDate, limit: Int = 1000) throws -> PlanContext {
    // Only the id and the six plain columns are selected (all in the listing index): the notes column is never
    // read here.
    var ids: [Int64] = []
    let candidates = try connection.prepare(
      """
      SELECT title, estimate_minutes, due, priority, energy, id FROM tasks WHERE status = 'open'
      ORDER BY due IS NULL, due, priority DESC, id LIMIT ?
      """
    ).rows([.integer(Int64(max(0, limit)))]) { row -> PlanCandidate in
      let due = Self.date(row.optionalText(2))
      ids.append(row.integer(5))
      return PlanCandidate(
        title: row.text(0), estimateMinutes: row.optionalInteger(1).map { Int($0) }, due: due,
        priority: Priority(rawValue: Int(row.integer(3))) ?? .none,
        energy: row.optionalInteger(4).flatMap { Energy(rawValue: Int($0)) }, overdue: due.map { $0 < today } ?? false)
    }
    return PlanContext(candidates: candidates, taskIDs: ids)
  }
}
