import CommandKit
import TaskerCore
import TaskerHTTP
import Testing

@testable import TaskerPlanning

@Suite("Plan requests: built from PlanContext values alone, labelled per request")
struct PlanRequestTests {
  static func candidate(_ title: String) -> PlanCandidate {
    PlanCandidate(title: title, estimateMinutes: nil, due: nil, priority: .high, energy: nil, overdue: false)
  }

  @Test func labelsAreOrdinalsAndTheBodyIsCanonical() throws {
    let today = try CalendarDate(parsing: "2026-12-02")
    let request = try PlanRequest(
      .plan, candidates: [Self.candidate("a"), Self.candidate("b")], today: today, model: "m", requestsSchema: true)
    #expect(request.labels == ["t1", "t2"])
    let parsed = try JSONDocument(parsing: request.body).value
    // Canonical: encoding the parsed value again gives the same bytes.
    #expect(parsed.encoded == request.body)
    #expect(parsed["store"] == .bool(false))
    #expect(parsed["user"] == nil && parsed["metadata"] == nil)
    guard case .array(let messages)? = parsed["messages"], case .string(let user)? = messages.last?["content"] else {
      Issue.record("no user message")
      return
    }
    let context = try JSONDocument(parsing: Array(user.utf8)).value
    guard case .array(let items)? = context["candidates"] else { throw SetupError() }
    #expect(items.map { $0["id"] } == [.string("t1"), .string("t2")])
    #expect(
      items.allSatisfy { item in
        guard case .object(let members) = item else { return false }
        return Set(members.keys) == Set(PlanCandidate.CodingKeys.allCases.map(\.rawValue) + ["id"])
      })
  }

  @Test func aTestRequestCarriesNoCandidate() throws {
    let request = try PlanRequest(
      .test, candidates: [Self.candidate("secret title")], today: try CalendarDate(parsing: "2026-12-02"), model: "m",
      requestsSchema: true)
    #expect(request.labels.isEmpty)
    #expect(!String(decoding: request.body, as: UTF8.self).contains("secret title"))
  }

  @Test(arguments: ["", "  \n", "a\u{1B}[31m", "a\u{7}", "a\u{85}", String(repeating: "x", count: 2001)])
  func questionsWithControlsOrOutOfBoundsAreRefused(_ question: String) {
    #expect(throws: PlanningError.self) { try PlanRequest.check(question: question) }
  }

  @Test func aQuestionMayHoldNewlinesAndTabs() throws {
    try PlanRequest.check(question: "What first?\n\tAnd then?")
  }
}

struct SetupError: Error {}
