import CommandKit

extension PlanCandidate {
  /// The six fields as JSON members, by an exhaustive switch over the
  /// candidate's keys, as its own encoder has: a seventh field would not
  /// compile here without a decision. What a provider's request (with a
  /// label added) and the assistant gate's planning view (with the id and
  /// status added) are built from.
  public var jsonMembers: [String: JSONValue] {
    var members: [String: JSONValue] = [:]
    for key in CodingKeys.allCases {
      switch key {
      case .title: members[key.rawValue] = .string(title)
      case .estimateMinutes: members[key.rawValue] = estimateMinutes.map { .integer(Int64($0)) } ?? .null
      case .due: members[key.rawValue] = due.map { .string($0.description) } ?? .null
      case .priority: members[key.rawValue] = .string(priority.name)
      case .energy: members[key.rawValue] = energy.map { .string($0.name) } ?? .null
      case .overdue: members[key.rawValue] = .bool(overdue)
      }
    }
    return members
  }
}
