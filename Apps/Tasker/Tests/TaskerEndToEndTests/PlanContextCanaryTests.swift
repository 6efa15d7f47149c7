import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@Suite("plan-context: notes, contexts and attachment names never reach a planning provider")
struct PlanContextCanaryTests {
  @Test func noCanaryAppearsInTheEncodedPlanContext() throws {
    let device = try TestDevice()
    var canaries = [String]()
    func canary(_ kind: String) -> String {
      let value = "CANARY-\(kind)-" + SecureRandom.bytes(count: 8).map { String($0, radix: 16) }.joined()
      canaries.append(value)
      return value
    }
    let file = device.root.path("attachment.txt")
    try Data("attachment content".utf8).write(to: URL(fileURLWithPath: file))
    for index in 1...6 {
      let added = try device.tasker(
        [
          "add", "title \(index)", "--notes", "-", "--contexts", canary("contexts"),
          "--due", "2026-11-2\(index)", "--estimate", "\(index * 10)", "--priority", "medium", "--energy", "high",
        ], input: canary("notes"))
      #expect(added.status == 0, "\(added.stderr)")
      let attached = try device.tasker(["attach", "add", "--task", "\(index)", file, "--name", canary("attachment")])
      #expect(attached.status == 0, "\(attached.stderr)")
    }
    // The canaries are really stored, where the plan context must not look.
    #expect(try device.tasker(["show", "3"]).stdoutText.contains("CANARY-notes-"))
    #expect(try device.tasker(["attach", "list"]).stdoutText.contains("CANARY-attachment-"))

    let plan = try device.tasker(["plan-context", "--json", "--today", "2026-11-24"])
    #expect(plan.status == 0, "\(plan.stderr)")
    for value in canaries { #expect(!plan.stdoutText.contains(value), "\(value) leaked") }
    #expect(!plan.stdoutText.contains("CANARY"))
    let human = try device.tasker(["plan-context", "--today", "2026-11-24"])
    #expect(!human.stdoutText.contains("CANARY"))

    let object = try #require(try plan.json() as? [String: Any])
    #expect(Array(object.keys) == ["candidates"])
    let candidates = try #require(object["candidates"] as? [[String: Any]])
    #expect(candidates.count == 6)
    for candidate in candidates {
      // The six fields, and the task's id for applying a plan by hand (a request labels candidates instead).
      #expect(Set(candidate.keys) == ["id", "title", "estimate_minutes", "due", "priority", "energy", "overdue"])
      #expect((candidate["id"] as? String).flatMap { Int64($0) } != nil)
    }
    #expect(candidates.map { $0["overdue"] as? Bool } == [true, true, true, false, false, false])
    #expect(candidates[0]["title"] as? String == "title 1")
    #expect(candidates[0]["estimate_minutes"] as? Int == 10)
    #expect(candidates[0]["due"] as? String == "2026-11-21")
    #expect(candidates[0]["priority"] as? String == "medium")
    #expect(candidates[0]["energy"] as? String == "high")
  }
}
