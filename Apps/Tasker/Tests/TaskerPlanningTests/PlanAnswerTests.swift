import CommandKit
import Testing

@testable import TaskerPlanning

@Suite("Plan answers: every rule refuses, in order, and nothing else gets through")
struct PlanAnswerTests {
  static let labels = ["t1", "t2", "t3"]

  /// A chat-completions body whose message content is `content`.
  static func body(_ content: String, finish: JSONValue = "stop") -> [UInt8] {
    JSONValue.object([
      "choices": .array([
        .object(["message": .object(["role": "assistant", "content": .string(content)]), "finish_reason": finish])
      ])
    ]).encoded
  }

  static func plan(_ steps: [(String, String)]) -> String {
    JSONValue.object([
      "plan": .array(steps.map { .object(["id": .string($0.0), "reason": .string($0.1)]) })
    ]).text
  }

  @Test func aGoodPlanMapsLabelsToIndices() throws {
    let steps = try PlanAnswer.plan(Self.body(Self.plan([("t3", "due first"), ("t1", "short")])), labels: Self.labels)
    #expect(steps == [PlanStep(index: 2, reason: "due first"), PlanStep(index: 0, reason: "short")])
    #expect(try PlanAnswer.plan(Self.body(Self.plan([])), labels: Self.labels) == [])
    #expect(try PlanAnswer.plan(Self.body(Self.plan([("t1", "x")]), finish: .null), labels: Self.labels).count == 1)
  }

  static let refused: [(String, [UInt8])] = [
    ("not JSON", Array("{\"choices\":".utf8)),
    ("a repeated member", Array(#"{"choices":[],"choices":[]}"#.utf8)),
    ("no choices", JSONValue.object(["id": "x"]).encoded),
    ("empty choices", JSONValue.object(["choices": []]).encoded),
    ("content null", JSONValue.object(["choices": [.object(["message": .object(["content": .null])])]]).encoded),
    ("cut short", body(plan([("t1", "x")]), finish: "length")),
    ("another finish", body(plan([("t1", "x")]), finish: "tool_calls")),
    ("content not JSON", body("Here is your plan: t1, t2")),
    ("content in a code fence", body("```json\n" + plan([("t1", "x")]) + "\n```")),
    ("content an array", body("[]")),
    ("an extra member", body(#"{"plan":[],"note":"x"}"#)),
    ("plan not an array", body(#"{"plan":{}}"#)),
    ("more steps than tasks", body(plan([("t1", "a"), ("t2", "b"), ("t3", "c"), ("t1", "d")]))),
    ("an unknown id", body(plan([("t4", "x")]))),
    ("a database-looking id", body(plan([("1", "x")]))),
    ("a repeated id", body(plan([("t1", "a"), ("t1", "b")]))),
    ("a step with an extra member", body(#"{"plan":[{"id":"t1","reason":"x","delete":true}]}"#)),
    ("an id that is a number", body(#"{"plan":[{"id":1,"reason":"x"}]}"#)),
    ("an empty reason", body(plan([("t1", "")]))),
    ("a long reason", body(plan([("t1", String(repeating: "é", count: 201))]))),
    ("an escape sequence", body(plan([("t1", "\u{1B}[31mred")]))),
    ("a newline", body(plan([("t1", "a\nb")]))),
    ("a C1 control", body(plan([("t1", "a\u{9B}b")]))),
    ("a right-to-left override", body(plan([("t1", "a\u{202E}b")]))),
    ("an isolate", body(plan([("t1", "a\u{2067}b")]))),
  ]

  @Test(arguments: refused.indices)
  func aBrokenAnswerIsRefused(_ index: Int) {
    let (name, body) = Self.refused[index]
    #expect(throws: PlanningError.self, "\(name)") { try PlanAnswer.plan(body, labels: Self.labels) }
  }

  @Test func theStatusDecidesFirst() {
    #expect(throws: PlanningError.keyRejected(status: 401)) { try PlanAnswer.check(status: 401, retryAfter: nil) }
    #expect(throws: PlanningError.keyRejected(status: 403)) { try PlanAnswer.check(status: 403, retryAfter: nil) }
    #expect(throws: PlanningError.rateLimited(retryAfterSeconds: 30)) {
      try PlanAnswer.check(status: 429, retryAfter: "30")
    }
    #expect(throws: PlanningError.rateLimited(retryAfterSeconds: nil)) {
      try PlanAnswer.check(status: 429, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT")
    }
    #expect(throws: PlanningError.providerFailed(status: 500)) { try PlanAnswer.check(status: 500, retryAfter: nil) }
    #expect(throws: PlanningError.providerFailed(status: 201)) { try PlanAnswer.check(status: 201, retryAfter: nil) }
  }

  @Test func anAnswerTextIsKeptAsItCameWithinItsBound() throws {
    #expect(try PlanAnswer.text(Self.body("Do \u{1B}[31mthis\nfirst")) == "Do \u{1B}[31mthis\nfirst")
    #expect(throws: PlanningError.self) { try PlanAnswer.text(Self.body("")) }
    #expect(throws: PlanningError.self) { try PlanAnswer.text(Self.body(String(repeating: "a", count: 4001))) }
    #expect(try PlanAnswer.text(Self.body(String(repeating: "a", count: 4000))).count == 4000)
  }
}
