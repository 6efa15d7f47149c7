import CommandKit
import Foundation
import TaskerCore
import TaskerHTTP
import Testing

@testable import TaskerPlanning

/// The vectors of Apps/Tasker/Vectors (provider-record-v1, plan-request-v1,
/// plan-answer-v1) through the Swift readers and writers: every outcome,
/// every body byte for byte, every view. scripts/plan-reader.py checks the
/// same files from the format pages alone.
@Suite("Planning vectors: records, request bodies and answers")
struct PlanningVectorTests {
  static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Vectors")

  static func file(_ name: String) throws -> [String: Any] {
    let data = try Data(contentsOf: vectors.appendingPathComponent(name))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
  }

  static func cases(_ name: String) throws -> [[String: Any]] {
    try #require(try file(name)["tests"] as? [[String: Any]])
  }

  static func bytes(_ test: [String: Any], text: String, hex: String) throws -> [UInt8] {
    if let text = test[text] as? String { return Array(text.utf8) }
    let digits = Array(try #require(test[hex] as? String).utf8)
    return stride(from: 0, to: digits.count, by: 2).map {
      UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
    }
  }

  /// The outcome name of a planning error, as the vectors spell it.
  static func outcome(_ error: PlanningError) -> String {
    switch error {
    case .recordMalformed: return "record_malformed"
    case .recordUnsupportedVersion: return "unsupported_version"
    case .keyRejected: return "key_rejected"
    case .rateLimited: return "rate_limited"
    case .providerFailed: return "provider_failed"
    case .answerRefused: return "answer_refused"
    default: return "\(error)"
    }
  }

  @Test func providerRecords() throws {
    let tests = try Self.cases("provider-record-v1.json")
    #expect(tests.count >= 80)
    for test in tests {
      let id = test["id"] as? Int ?? 0
      let item = try #require(test["item"] as? String)
      let value = try Self.bytes(test, text: "record", hex: "record_hex")
      let expected = test["result"] as? String
      do {
        let record = try ProviderRecord(itemName: item, bytes: value)
        #expect(expected == "success", "case \(id): read, expected \(expected ?? "?")")
        #expect(record.encoded == value, "case \(id): does not re-encode to its bytes")
        let view = try #require(test["view"] as? [String: Any])
        #expect(view["name"] as? String == record.name && view["url"] as? String == record.endpoint.text)
        #expect(view["scope"] as? String == record.endpoint.scope.rawValue, "case \(id)")
        #expect(view["model"] as? String == record.model && view["key_item"] as? String == record.keyItem)
        #expect(view["response_format"] as? Bool == record.requestsSchema, "case \(id)")
        #expect(view["confirmed_at"] as? String == record.confirmedAt.map { TimeStamp.utc(seconds: $0) })
      } catch let error as PlanningError {
        #expect(Self.outcome(error) == expected, "case \(id) (\(test["comment"] ?? "")): \(error)")
      }
    }
  }

  static func candidate(_ object: [String: Any]) throws -> PlanCandidate {
    PlanCandidate(
      title: try #require(object["title"] as? String), estimateMinutes: object["estimate_minutes"] as? Int,
      due: try (object["due"] as? String).map(CalendarDate.init(parsing:)),
      priority: try #require(Priority.allCases.first { $0.name == object["priority"] as? String }),
      energy: Energy.allCases.first { $0.name == object["energy"] as? String && $0.rawValue > 0 },
      overdue: try #require(object["overdue"] as? Bool))
  }

  @Test func requestBodies() throws {
    let file = try Self.file("plan-request-v1.json")
    let tests = try #require(file["tests"] as? [[String: Any]])
    #expect(tests.count >= 6)
    for test in tests {
      let id = test["id"] as? Int ?? 0
      let inputs = try #require(test["inputs"] as? [String: Any])
      let purpose: PlanRequest.Purpose
      switch inputs["kind"] as? String {
      case "plan": purpose = .plan
      case "ask": purpose = .ask(question: try #require(inputs["question"] as? String))
      default: purpose = .test
      }
      let candidates = try (inputs["candidates"] as? [[String: Any]] ?? []).map(Self.candidate)
      let request = try PlanRequest(
        purpose, candidates: candidates, today: try CalendarDate(parsing: inputs["today"] as? String ?? "2026-12-02"),
        model: try #require(inputs["model"] as? String), requestsSchema: inputs["response_format"] as? Bool ?? false)
      #expect(
        String(decoding: request.body, as: UTF8.self) == test["body"] as? String, "case \(id): \(test["comment"] ?? "")"
      )
    }
    for pair in try #require(file["request_urls"] as? [[String: String]]) {
      let endpoint = try HTTPEndpoint(parsing: try #require(pair["url"]))
      #expect(endpoint.appending(path: "chat/completions").text == pair["request_url"], "\(pair)")
    }
  }

  @Test func answers() throws {
    let tests = try Self.cases("plan-answer-v1.json")
    #expect(tests.count >= 25)
    for test in tests {
      let id = test["id"] as? Int ?? 0
      var body = try Self.bytes(test, text: "body", hex: "body_hex")
      body += [UInt8](repeating: 0x20, count: test["body_padding"] as? Int ?? 0)
      let labels = (0..<(test["candidates"] as? Int ?? 0)).map { "t\($0 + 1)" }
      let expected = test["result"] as? String
      do {
        try PlanAnswer.check(status: try #require(test["status"] as? Int), retryAfter: nil)
        if test["kind"] as? String == "ask" {
          let text = try PlanAnswer.text(body)
          #expect(expected == "success" && text == test["answer"] as? String, "case \(id)")
        } else {
          let steps = try PlanAnswer.plan(body, labels: labels)
          let plan = try #require(test["plan"] as? [[String: String]], "case \(id): read, expected \(expected ?? "?")")
          #expect(steps.map { labels[$0.index] } == plan.map { $0["label"] ?? "" }, "case \(id)")
          #expect(steps.map(\.reason) == plan.map { $0["reason"] ?? "" }, "case \(id)")
        }
      } catch let error as PlanningError {
        #expect(Self.outcome(error) == expected, "case \(id) (\(test["comment"] ?? "")): \(error)")
      }
    }
  }
}
