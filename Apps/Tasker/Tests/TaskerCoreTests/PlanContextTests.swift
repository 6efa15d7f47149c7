import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

@Suite("PlanContext: six fields per task and no place for anything else")
struct PlanContextTests {
  /// Fails to compile when a coding key is added or removed: the switch
  /// must name every case, and each case must name a stored property.
  static func property(for key: PlanCandidate.CodingKeys) -> PartialKeyPath<PlanCandidate> {
    switch key {
    case .title: return \.title
    case .estimateMinutes: return \.estimateMinutes
    case .due: return \.due
    case .priority: return \.priority
    case .energy: return \.energy
    case .overdue: return \.overdue
    }
  }

  @Test func theFieldListIsExactlyTheSix() throws {
    #expect(
      PlanCandidate.CodingKeys.allCases.map(\.stringValue) == [
        "title", "estimate_minutes", "due", "priority", "energy", "overdue",
      ])
    let candidate = PlanCandidate(
      title: "t", estimateMinutes: 5, due: try CalendarDate(parsing: "2026-12-01"), priority: .low, energy: .high,
      overdue: true)
    // The stored properties (including any with a default value) are the coded ones.
    let stored = Mirror(reflecting: candidate).children.map { $0.label ?? "?" }
    #expect(stored == ["title", "estimateMinutes", "due", "priority", "energy", "overdue"])
    #expect(
      Mirror(reflecting: PlanContext(candidates: [], taskIDs: [])).children.map { $0.label ?? "?" } == [
        "candidates", "taskIDs",
      ])
    // Each key names its own stored property.
    #expect(Set(PlanCandidate.CodingKeys.allCases.map(Self.property(for:))).count == stored.count)
    let json = String(decoding: try JSONEncoder().encode(candidate), as: UTF8.self)
    let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
    #expect(Set(object?.keys ?? [:].keys) == Set(PlanCandidate.CodingKeys.allCases.map(\.stringValue)))
    #expect(try JSONDecoder().decode(PlanCandidate.self, from: Data(json.utf8)) == candidate)
  }

  @Test func buildsFromOpenTasksWithTheOverdueFlag() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    var late = TaskDraft(title: "late")
    late.due = try CalendarDate(parsing: "2026-11-30")
    late.estimateMinutes = 30
    late.priority = .high
    late.energy = .low
    late.notes = "never in the plan"
    try store.addTask(late)
    var today = TaskDraft(title: "today")
    today.due = try CalendarDate(parsing: "2026-12-01")
    try store.addTask(today)
    try store.addTask(TaskDraft(title: "undated"))
    try store.addTask(TaskDraft(title: "finished"))
    try store.completeTask(id: 4)
    let plan = try store.planContext(today: try CalendarDate(parsing: "2026-12-01"))
    #expect(plan.candidates.map(\.title) == ["late", "today", "undated"])
    #expect(plan.candidates.map(\.overdue) == [true, false, false])
    #expect(
      plan.candidates[0]
        == PlanCandidate(
          title: "late", estimateMinutes: 30, due: try CalendarDate(parsing: "2026-11-30"), priority: .high,
          energy: .low, overdue: true))
    #expect(try store.planContext(today: try CalendarDate(parsing: "2026-12-01"), limit: 1).candidates.count == 1)
  }

  @Test func needsNoKeyEvenWhenNotesAreSealed() throws {
    let device = try TestDevice()
    let draft = TaskDraft(title: "t", notes: "sealed")
    try device.store().addTask(draft)
    try device.vault().lock()
    #expect(try device.store().planContext(today: CalendarDate.today()).candidates.map(\.title) == ["t"])
  }
}
