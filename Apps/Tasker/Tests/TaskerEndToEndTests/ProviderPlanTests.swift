import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

/// `tasker plan` and `tasker ask` against the stand-in server: the exact
/// body, labels t1…tN mapped back to task ids, `--apply` changing only
/// `plan_order`, `--dry-run` sending nothing, answers printed with control
/// characters made visible, and no note, context, attachment or page text in
/// any request byte (issue 27).
@Suite struct ProviderPlanTests {
  /// A device with `planningTasks`, a loopback provider `local` on a new
  /// stand-in server in `mode`, and that server.
  static func planningDevice(mode: String = "plan-reverse", _ options: [String] = []) throws -> (
    device: TestDevice, server: StandInProvider
  ) {
    let device = try TestDevice()
    let server = try StandInProvider(mode: mode)
    try device.addProvider("local", url: server.url, options)
    try device.addPlanningTasks()
    return (device, server)
  }

  @Test func theRequestIsExactlyThePlanBodyOfTheSpecification() throws {
    let (device, server) = try Self.planningDevice()
    let context = try #require(
      try device.succeed(["plan-context", "--json", "--today", planningDay]).json() as? [String: Any])
    let candidates = try #require(context["candidates"] as? [[String: Any]])
    #expect(candidates.map { $0["id"] as? String } == planningTasks.map(\.id), "plan-context gives task ids")

    try device.succeed(["plan", "--today", planningDay])
    let request = try #require(try server.requests().first)
    #expect(request.line == "POST /v1/chat/completions HTTP/1.1")
    #expect(request.bodyText == ExpectedRequestBodies.plan(ExpectedRequestBodies.planningCandidates))
    #expect(try request.candidateIDs() == ["t1", "t2", "t3", "t4"], "labels, never database ids")
    #expect(request.header("Content-Type") == ["application/json"] && request.header("Accept") == ["application/json"])
    for task in planningTasks {
      #expect(!(request.requestLine + request.headerBytes).contains(bytes: task.title), "no task data in headers")
    }
  }

  @Test func withoutResponseFormatTheBodyLeavesItOut() throws {
    let (device, server) = try Self.planningDevice(["--no-response-format", "--model", "qwen2.5:7b"])
    try device.succeed(["plan", "--today", planningDay])
    let request = try #require(try server.requests().first)
    #expect(
      request.bodyText
        == ExpectedRequestBodies.plan(
          ExpectedRequestBodies.planningCandidates, model: "qwen2.5:7b", responseFormat: false))
  }

  @Test func labelsAreMappedBackToTheRealTasks() throws {
    let (device, server) = try Self.planningDevice()
    let planned = try device.succeed(["plan", "--today", planningDay, "--json"])
    let object = try #require(try planned.json() as? [String: Any])
    #expect(Set(object.keys) == ["provider", "plan", "applied", "skipped"])
    #expect((object["skipped"] as? [Any])?.isEmpty == true)
    #expect(object["provider"] as? String == "local" && object["applied"] as? Bool == false)
    let plan = try #require(object["plan"] as? [[String: Any]])
    // The stand-in answers t4, t3, t2, t1: tasks 6, 3, 5 and 4.
    #expect(plan.map { $0["id"] as? String } == ["6", "3", "5", "4"], "\(plan)")
    #expect(
      plan.map { $0["title"] as? String } == ["Tidy up", "Pay \"rent\" / €", "Write the report", "Call the bank"])
    #expect(
      plan.map { $0["reason"] as? String } == ["reason for t4", "reason for t3", "reason for t2", "reason for t1"])
    #expect(plan.allSatisfy { Set($0.keys) == ["id", "title", "reason"] })

    let human = try device.succeed(["plan", "--today", planningDay])
    let steps = [
      "1. Tidy up (#6) — reason for t4", "2. Pay \"rent\" / € (#3) — reason for t3",
      "3. Write the report (#5) — reason for t2", "4. Call the bank (#4) — reason for t1",
    ]
    let lines = human.stdoutText.split(separator: "\n").map(String.init)
    #expect(lines.filter { $0.first?.isNumber == true } == steps, "\(human.stdoutText)")
    #expect(
      human.stdoutText == (["Plan from local: 4 of 4 open tasks"] + steps).joined(separator: "\n") + "\n",
      "a heading, then one line per planned task")
    #expect(try server.requests().count == 2)
    #expect(try device.planOrders() == [nil, nil, nil, nil], "without --apply nothing is stored")
  }

  @Test func applySetsPlanOrderAndChangesNothingElse() throws {
    let (device, server) = try Self.planningDevice()
    let before = try device.tableSnapshot()
    let applied = try device.succeed(["plan", "--today", planningDay, "--apply", "--json"])
    #expect((try applied.json() as? [String: Any])?["applied"] as? Bool == true)
    // Tasks 4, 5, 3, 6 were planned 4th, 3rd, 2nd and 1st.
    #expect(try device.planOrders() == [4, 3, 2, 1])
    #expect(try device.planOrder("2") == nil, "the completed task has none")
    #expect(try device.tableSnapshot() == before, "only plan_order changed")

    // A shorter plan clears the order of every task it leaves out.
    try device.succeed(["plan", "--today", planningDay, "--apply", "--limit", "2"])
    #expect(try device.planOrders() == [2, 1, nil, nil])
    #expect(try device.tableSnapshot() == before)
    let listed = try #require(try device.succeed(["list", "--json"]).json() as? [String: Any])
    let tasks = try #require(listed["tasks"] as? [[String: Any]])
    #expect(tasks.first { $0["id"] as? String == "5" }?["plan_order"] as? Int == 1, "list --json has plan_order")
    #expect(try server.requests().count == 2)
  }

  @Test func aDryRunPrintsTheBodyTheServerWouldGetAndSendsNothing() throws {
    let device = try TestDevice()
    let server = try StandInProvider(mode: "plan-reverse")
    let key = randomSecret("sk-dry")
    try device.setKey("provider/test", key)
    try device.addProvider("local", url: server.url, ["--key-item", "provider/test"])
    try device.addPlanningTasks()
    let before = try device.tableSnapshot(withoutPlanOrder: false)

    let dryRun = try device.succeed(["plan", "--today", planningDay, "--dry-run"])
    #expect(!dryRun.printedBody.contains("\n"), "one line")
    #expect(dryRun.stderr.contains(server.url) && dryRun.stderr.contains("provider/test"), "\(dryRun.stderr)")
    #expect(!dryRun.stderr.contains(key) && !dryRun.stdout.contains(bytes: key))
    let askDryRun = try device.succeed(["ask", "Which is quickest?", "--today", planningDay, "--dry-run"])
    #expect(try server.connectionCount() == 0, "the server saw no connection")
    #expect(try device.providerCalls().isEmpty, "a dry run writes no log")
    #expect(try device.tableSnapshot(withoutPlanOrder: false) == before, "and changes nothing")

    try device.succeed(["plan", "--today", planningDay])
    try server.set(mode: "ask-text")
    try device.succeed(["ask", "Which is quickest?", "--today", planningDay])
    let requests = try server.requests()
    #expect(requests.count == 2)
    #expect(requests.first?.bodyText == dryRun.printedBody, "the dry run printed the very body sent")
    #expect(requests.last?.bodyText == askDryRun.printedBody)
  }

  @Test func askSendsTheQuestionAndPrintsTheAnswerWithControlCharactersVisible() throws {
    let (device, server) = try Self.planningDevice(mode: "ask-text")
    let question = "What first?\tBe \"brief\" \\ kind.\nThen what? ¿Qué?"
    let asked = try device.succeed(["ask", question, "--today", planningDay])
    let request = try #require(try server.requests().first)
    #expect(request.bodyText == ExpectedRequestBodies.ask(question, ExpectedRequestBodies.planningCandidates))
    #expect(!asked.stdout.contains(0x1B), "no raw ESC reaches the terminal")
    #expect(asked.stdoutText.contains("Start with \\u{1B}[31mthe report\\u{1B}[0m."), "\(asked.stdoutText)")
    #expect(asked.stdoutText.contains("Then call the bank."))

    let json = try device.succeed(["ask", question, "--today", planningDay, "--json"])
    let object = try #require(try json.json() as? [String: Any])
    #expect(Set(object.keys) == ["provider", "answer"] && object["provider"] as? String == "local")
    #expect(object["answer"] as? String == "Start with \u{1B}[31mthe report\u{1B}[0m.\nThen call the bank.")
    #expect(!json.stdout.contains(0x1B), "JSON escapes it")
  }

  @Test func aQuestionOutsideItsBoundsIsRefusedBeforeAnythingIsSent() throws {
    let (device, server) = try Self.planningDevice(mode: "ask-text")
    for question in ["", "red \u{1B}[31m", "bell \u{07}", "cr \r here", String(repeating: "é", count: 2001)] {
      let refused = try device.tasker(["ask", question])
      #expect(refused.status == 65, "\(question.unicodeScalars.count) scalars: \(refused.stderr)")
    }
    #expect(try server.connectionCount() == 0)
    let longest = String(repeating: "é", count: 2000)
    let accepted = try device.succeed(["ask", longest, "--dry-run", "--today", planningDay])
    #expect(accepted.printedBody == ExpectedRequestBodies.ask(longest, ExpectedRequestBodies.planningCandidates))
  }

  @Test func noNoteContextAttachmentOrPageTextReachesAnyRequestByte() throws {
    let (device, server) = try Self.planningDevice()
    var canaries = [String]()
    func canary(_ kind: String) -> String {
      let value = "CANARY-\(kind)-" + SecureRandom.bytes(count: 8).map { String($0, radix: 16) }.joined()
      canaries.append(value)
      return value
    }
    let file = device.root.path("attachment.txt")
    try Data(canary("attachment-content").utf8).write(to: URL(fileURLWithPath: file))
    for task in planningTasks {
      try device.succeed(["edit", task.id, "--notes", "-", "--contexts", canary("contexts")], input: canary("notes"))
      try device.succeed(["attach", "add", "--task", task.id, file, "--name", canary("attachment")])
    }
    try device.succeed(["page", "new", canary("page-title"), "--body", "-"], input: canary("page-body"))
    try device.succeed(["attach", "add", "--page", "1", file, "--name", canary("page-attachment")])
    #expect(try device.succeed(["show", "4"]).stdoutText.contains("CANARY-notes-"), "the canaries are stored")
    #expect(try device.succeed(["page", "show", "1"]).stdoutText.contains("CANARY-page-body-"))

    var sent = [[UInt8]]()
    sent.append(try device.succeed(["plan", "--today", planningDay, "--dry-run"]).stdout)
    sent.append(try device.succeed(["ask", "What is in my notes?", "--today", planningDay, "--dry-run"]).stdout)
    try device.succeed(["plan", "--today", planningDay, "--apply"])
    try server.set(mode: "ask-text")
    try device.succeed(["ask", "What is in my notes?", "--today", planningDay])
    try server.set(mode: "ok")
    try device.succeed(["provider", "test", "local"])
    let requests = try server.requests()
    #expect(requests.count == 3)
    sent += requests.map(\.raw)
    for bytes in sent {
      #expect(!bytes.contains(bytes: "CANARY"), "\(String(decoding: bytes, as: UTF8.self))")
      for value in canaries { #expect(!bytes.contains(bytes: value), "\(value) leaked") }
    }
    #expect(try requests[0].candidateIDs() == ["t1", "t2", "t3", "t4"])
    #expect(requests[0].bodyText == ExpectedRequestBodies.plan(ExpectedRequestBodies.planningCandidates))
  }

  @Test func withNoOpenTaskNothingIsSent() throws {
    let device = try TestDevice()
    let server = try StandInProvider(mode: "plan-reverse")
    try device.addProvider("local", url: server.url)
    try device.succeed(["add", "Finished already"])
    try device.succeed(["done", "1"])
    for arguments in [["plan"], ["plan", "--dry-run"], ["plan", "--apply"]] {
      let result = try device.succeed(arguments)
      #expect(result.stdoutText.isEmpty && result.stderr.contains("nothing was sent"), "\(arguments): \(result.stderr)")
    }
    let json = try #require(try device.succeed(["plan", "--json"]).json() as? [String: Any])
    #expect((json["plan"] as? [Any])?.isEmpty == true)
    #expect(try server.connectionCount() == 0)
    #expect(try device.succeed(["provider", "log", "--json"]).stdoutText == "{\"calls\":[]}\n")
  }
}
