import Foundation
import TaskerTestSupport
import Testing

/// `tasker provider add|list|remove|test|log` against the stand-in server,
/// the key read from a device-only vault item and never shown, and a
/// public-network provider that is never contacted without confirmation
/// (issue 27).
@Suite struct ProviderCommandTests {
  /// The view fields of `provider list --json`, in PLAN-SPEC's order.
  static let viewFields: Set = ["name", "url", "scope", "model", "key_item", "response_format", "confirmed_at"]

  @Test func addListAndRemoveKeepTheRecordInTheVault() throws {
    let device = try TestDevice()
    let url = "http://127.0.0.1:8080/v1"
    // The key item is checked when the provider is added: missing, it is refused.
    let missing = try device.tasker(["provider", "add", "local", "--url", url, "--key-item", "provider/test"])
    #expect(missing.status == 19 && missing.stderr.contains("has no item 'provider/test'"), "\(missing.stderr)")
    try device.setKey("provider/test", randomSecret("sk-local"))
    let added = try device.addProvider("local", url: url, ["--key-item", "provider/test", "--model", "llama-3.1-8b"])
    #expect(
      added.stdoutText
        == "provider local added: \(url) (loopback), model llama-3.1-8b, key from vault item provider/test\n")
    let lan = try device.addProvider("lan", url: "http://192.168.1.20:8080/v1", ["--json"])
    let view = try #require(try lan.json() as? [String: Any])
    #expect(Set(view.keys) == Self.viewFields, "\(view)")
    #expect(view["scope"] as? String == "private-network")
    #expect(view["model"] as? String == "default")
    #expect(view["key_item"] is NSNull && view["confirmed_at"] is NSNull)
    #expect(view["response_format"] as? Bool == true)

    let listed = try device.succeed(["provider", "list", "--json"])
    let providers = try #require((try listed.json() as? [String: Any])?["providers"] as? [[String: Any]])
    #expect(Set(providers.compactMap { $0["name"] as? String }) == ["local", "lan"])
    let local = try #require(providers.first { $0["name"] as? String == "local" })
    #expect(Set(local.keys) == Self.viewFields)
    #expect(local["url"] as? String == url && local["scope"] as? String == "loopback")
    #expect(local["model"] as? String == "llama-3.1-8b" && local["key_item"] as? String == "provider/test")
    let human = try device.succeed(["provider", "list"]).stdoutText.split(separator: "\n")
    #expect(human.count == 2 && human.contains { $0.contains("local") } && human.contains { $0.contains("lan") })

    // The record is the vault item tasker/provider/NAME, device-only, in its canonical encoding.
    let record = try device.taskkey(["item", "get", "tasker/provider/local", "--exact"])
    #expect(record.status == 0, "\(record.stderr)")
    #expect(
      record.stdoutText == "{\"confirmed_at\":null,\"key_item\":\"provider/test\",\"model\":\"llama-3.1-8b\","
        + "\"name\":\"local\",\"response_format\":true,\"url\":\"\(url)\",\"version\":1}")
    let items = try #require((try device.taskkey(["item", "list", "--json"]).json() as? [String: Any])?["items"])
    let item = try #require((items as? [[String: Any]])?.first { $0["name"] as? String == "tasker/provider/local" })
    #expect(item["class"] as? String == "after-first-unlock-this-device-only")

    #expect(try device.tasker(["provider", "add", "local", "--url", url]).status == 73, "the name exists")
    try device.succeed(["provider", "remove", "local"])
    let after = try device.succeed(["provider", "list", "--json"])
    let left = try #require((try after.json() as? [String: Any])?["providers"] as? [[String: Any]])
    #expect(left.compactMap { $0["name"] as? String } == ["lan"])
    #expect(try device.taskkey(["item", "get", "tasker/provider/local"]).status != 0, "the record is gone")
    #expect(try device.tasker(["provider", "remove", "local"]).status == 19)
  }

  @Test func plainHTTPToThePublicNetworkAndAPublicURLWithoutAKeyAreRefused() throws {
    let device = try TestDevice()
    for url in ["http://api.example.invalid/v1", "http://8.8.8.8/v1", "http://172.32.0.1/v1"] {
      let refused = try device.tasker(["provider", "add", "plain", "--url", url, "--key-item", "provider/x"])
      #expect(refused.status == 65, "\(url): \(refused.stderr)")
    }
    let keyless = try device.tasker(["provider", "add", "cloud", "--url", "https://api.example.invalid/v1"])
    #expect(keyless.status == 64, "\(keyless.stderr)")
    let listed = try device.succeed(["provider", "list", "--json"])
    #expect((try listed.json() as? [String: Any])?["providers"] as? [Any] != nil)
    #expect(((try listed.json() as? [String: Any])?["providers"] as? [Any])?.isEmpty == true, "nothing was stored")
  }

  @Test func aKeyThatCannotBeABearerTokenIsRefusedWhenAdded() throws {
    let device = try TestDevice()
    try device.setKey("provider/spaced", "sk has spaces")
    let refused = try device.tasker([
      "provider", "add", "local", "--url", "http://127.0.0.1:8080/v1", "--key-item", "provider/spaced",
    ])
    #expect(refused.status == 65, "\(refused.stderr)")
    #expect(refused.stderr.contains("cannot be sent as a bearer key"), "\(refused.stderr)")
    #expect(!refused.stderr.contains("sk has spaces"), "the value is never shown")
    #expect(try device.tasker(["provider", "list", "--json"]).stdoutText == "{\"providers\":[]}\n")
  }

  /// A record is data even in the vault: one not written by Tasker is refused, never used.
  @Test func aRecordThatBreaksItsFormatIsRefused() throws {
    let device = try TestDevice()
    let record =
      #"{"confirmed_at":null,"key_item":null,"model":"m","name":"evil","response_format":true,"#
      + #""url":"http://8.8.8.8/v1","version":1}"#
    try device.setKey("tasker/provider/evil", record)
    for arguments in [["provider", "list"], ["plan", "--dry-run"], ["provider", "test", "evil"]] {
      let refused = try device.tasker(arguments)
      #expect(refused.status == 65, "\(arguments): \(refused.stderr)")
      #expect(refused.stderr.contains("the provider record 'evil' is malformed"), "\(refused.stderr)")
    }
    try device.succeed(["provider", "remove", "evil"])
    #expect(try device.tasker(["provider", "list", "--json"]).stdoutText == "{\"providers\":[]}\n")
  }

  @Test func addingNeedsTheVaultUnlocked() throws {
    let device = try TestDevice(unlock: false)
    let locked = try device.tasker(["provider", "add", "local", "--url", "http://127.0.0.1:8080/v1"])
    #expect(locked.status == 14, "\(locked.stderr)")
  }

  @Test func theBearerValueIsExactlyTheDeviceOnlyItemAndIsShownNowhere() throws {
    let device = try TestDevice()
    let server = try StandInProvider(mode: "ok")
    let key = randomSecret("sk-test")
    try device.setKey("provider/test", key)
    var outputs = [ProcessResult]()
    outputs.append(try device.addProvider("local", url: server.url, ["--key-item", "provider/test", "--json"]))

    let tested = try device.succeed(["provider", "test", "local"])
    outputs.append(tested)
    #expect(
      tested.stdoutText.wholeMatch(of: #/provider local answered HTTP 200 in \d+ ms\n/#) != nil, "\(tested.stdoutText)")
    let request = try #require(try server.requests().first)
    #expect(request.header("Authorization") == ["Bearer \(key)"], "\(request.header("Authorization"))")
    #expect(request.line == "POST /v1/chat/completions HTTP/1.1")
    #expect(request.header("Content-Type") == ["application/json"])
    #expect(request.header("Accept") == ["application/json"])
    #expect(request.bodyText == ExpectedRequestBodies.test(), "\(request.bodyText)")

    try device.addPlanningTasks()
    try server.set(mode: "plan-reverse")
    for arguments in [
      ["plan", "--today", planningDay], ["plan", "--today", planningDay, "--json"],
      ["plan", "--today", planningDay, "--dry-run"], ["provider", "list"], ["provider", "list", "--json"],
      ["provider", "log"], ["provider", "log", "--json"],
    ] {
      outputs.append(try device.succeed(arguments))
    }
    let requests = try server.requests()
    #expect(requests.count == 3)
    #expect(requests.allSatisfy { $0.header("Authorization") == ["Bearer \(key)"] })
    #expect(requests.allSatisfy { !($0.requestLine + $0.body).contains(bytes: key) }, "only in the header")
    for output in outputs {
      #expect(!output.stdout.contains(bytes: key) && !output.stderr.contains(key), "\(output.stdoutText)")
    }
    let dryRun = outputs[outputs.count - 5]
    #expect(dryRun.stderr.contains("provider/test") && dryRun.stderr.contains(server.url), "\(dryRun.stderr)")
    #expect(!(try device.homeBytes()).contains(bytes: key), "the key is in no file of the Tasker home")
    let record = try device.taskkey(["item", "get", "tasker/provider/local"])
    #expect(!record.stdout.contains(bytes: key), "the record names the item, never its value")
  }

  @Test(.enabled(if: Sandbox.canTrace, "strace is missing or ptrace is not permitted here"))
  func theKeyIsInNoArgumentVectorOfAnyProcess() throws {
    let device = try TestDevice()
    let server = try StandInProvider(mode: "plan-reverse")
    let key = randomSecret("sk-argv")
    try device.setKey("provider/test", key)
    try device.addProvider("local", url: server.url, ["--key-item", "provider/test"])
    try device.addPlanningTasks()
    let trace = device.root.path("execve.txt")
    let traced = try Binary(path: Binary.which("strace")).run(
      ["-f", "-qq", "-s", "65536", "-e", "trace=execve", "-o", trace, "--", Binary.tasker.path, "plan"],
      environment: device.environment)
    #expect(traced.status == 0, "\(traced.stderr)")
    let calls = try String(contentsOfFile: trace, encoding: .utf8)
    #expect(calls.contains("execve("), "the trace saw tasker start")
    #expect(!calls.contains(key), "no process got the key in argv or its environment")
    #expect(try server.requests().first?.header("Authorization") == ["Bearer \(key)"])
  }

  @Test func withoutAKeyItemNoAuthorizationHeaderIsSent() throws {
    let device = try TestDevice()
    let server = try StandInProvider(mode: "plan-reverse")
    try device.addProvider("local", url: server.url)
    try device.addPlanningTasks()
    try device.succeed(["plan", "--today", planningDay])
    let request = try #require(try server.requests().first)
    #expect(request.header("Authorization").isEmpty, "\(String(decoding: request.headerBytes, as: UTF8.self))")
  }

  @Test func aSynchronisableKeyItemIsRefusedAndNothingIsSent() throws {
    let device = try TestDevice()
    let server = try StandInProvider(mode: "plan-reverse")
    let key = randomSecret("sk-sync")
    try device.setKey("provider/synced", key, deviceOnly: false)
    try device.addPlanningTasks()
    let added = try device.tasker(["provider", "add", "local", "--url", server.url, "--key-item", "provider/synced"])
    #expect(added.status == 0 || added.status == 65, "refused now or at call time: \(added.stderr)")
    if added.status == 0 {
      for arguments in [["plan"], ["ask", "What first?"], ["provider", "test", "local"]] {
        let refused = try device.tasker(arguments)
        #expect(refused.status == 65, "\(arguments): \(refused.stderr)")
        #expect(!refused.stderr.contains(key) && refused.stdout.isEmpty)
      }
    }
    #expect(try server.connectionCount() == 0, "nothing was sent")
  }

  @Test func eachRequestLeavesALogRowNewestFirst() throws {
    let device = try TestDevice()
    let server = try StandInProvider(mode: "plan-reverse")
    try device.addProvider("local", url: server.url)
    try device.addPlanningTasks()
    #expect(try device.providerCalls().isEmpty)
    try device.succeed(["plan", "--today", planningDay])
    try server.set(mode: "ask-text")
    try device.succeed(["ask", "What first?", "--today", planningDay])
    try server.set(mode: "ok")
    try device.succeed(["provider", "test", "local"])
    try device.succeed(["plan", "--today", planningDay, "--dry-run"])

    let calls = try device.providerCalls()
    let requests = try server.requests()
    #expect(calls.count == 3, "the dry run wrote no row: \(calls)")
    #expect(requests.count == 3)
    #expect(calls.map { $0["kind"] as? String } == ["test", "ask", "plan"])
    #expect(calls.map { $0["candidates"] as? Int } == [0, 4, 4])
    for (call, request) in zip(calls, requests.reversed()) {
      #expect(
        Set(call.keys) == [
          "at", "provider", "origin", "kind", "candidates", "bytes_sent", "bytes_received", "status", "outcome",
        ])
      #expect(call["provider"] as? String == "local" && call["origin"] is String)
      #expect(call["status"] as? Int == 200 && call["outcome"] as? String == "ok")
      #expect((call["at"] as? String)?.wholeMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/#) != nil, "\(call)")
      let sent = try #require(call["bytes_sent"] as? Int)
      #expect(sent >= request.body.count && sent <= request.raw.count, "\(sent) of \(request.body.count) body bytes")
      #expect((call["bytes_received"] as? Int ?? 0) > 0)
    }
    let limited = try device.succeed(["provider", "log", "--json", "--limit", "1"])
    let one = try #require((try limited.json() as? [String: Any])?["calls"] as? [[String: Any]])
    #expect(one.count == 1 && one.first?["kind"] as? String == "test")
    let human = try device.succeed(["provider", "log"]).stdoutText.split(separator: "\n")
    #expect(human.count == 3 && human.allSatisfy { $0.contains("local") }, "\(human)")
  }

  @Test func theProviderIsTheOnlyOneOrNamed() throws {
    let device = try TestDevice()
    try device.addPlanningTasks()
    let none = try device.tasker(["plan"])
    #expect(none.status == 19 && none.stderr.contains("no planning provider is set up"), "\(none.stderr)")
    #expect(try device.tasker(["ask", "What first?"]).status == 19)
    let server = try StandInProvider(mode: "plan-reverse")
    try device.addProvider("one", url: server.url)
    try device.addProvider("two", url: server.url)
    let several = try device.tasker(["plan"])
    #expect(several.status == 64, "\(several.stderr)")
    #expect(try server.connectionCount() == 0)
    let named = try device.succeed(["plan", "--provider", "two", "--json", "--today", planningDay])
    #expect((try named.json() as? [String: Any])?["provider"] as? String == "two")
    #expect(try device.providerCalls().map { $0["provider"] as? String } == ["two"])
  }

  @Test func aPublicProviderIsNeverContactedWithoutConfirmation() throws {
    let device = try TestDevice()
    let url = "https://api.example.invalid/v1"
    let key = randomSecret("sk-cloud")
    try device.setKey("provider/cloud", key)
    let added = try device.addProvider("cloud", url: url, ["--key-item", "provider/cloud", "--model", "gpt-4o-mini"])
    #expect(
      added.stdoutText
        == "provider cloud added: \(url) (public-network), model gpt-4o-mini, key from vault item provider/cloud\n")
    try device.addPlanningTasks()
    for arguments in [["plan"], ["plan", "--apply"], ["ask", "What first?"], ["provider", "test", "cloud"]] {
      let refused = try device.tasker(arguments)
      #expect(refused.status == 56, "\(arguments) without a terminal and without --yes: \(refused.stderr)")
      #expect(refused.stdout.isEmpty && !refused.stderr.contains(key))
    }
    #expect(try device.providerCalls().isEmpty, "nothing was sent, so nothing was logged")
    #expect(try device.planOrders() == [nil, nil, nil, nil])
    let listed = try device.succeed(["provider", "list", "--json"])
    let view = try #require(((try listed.json() as? [String: Any])?["providers"] as? [[String: Any]])?.first)
    #expect(view["confirmed_at"] is NSNull, "a refusal confirms nothing")
    #expect(view["scope"] as? String == "public-network")

    // A dry run needs no confirmation and contacts nothing.
    let dryRun = try device.succeed(["plan", "--dry-run", "--today", planningDay])
    let body = ExpectedRequestBodies.plan(ExpectedRequestBodies.planningCandidates, model: "gpt-4o-mini")
    #expect(dryRun.printedBody == body, "\(dryRun.stdoutText)")
    #expect(dryRun.stderr.contains(url) && dryRun.stderr.contains("provider/cloud") && !dryRun.stderr.contains(key))
    let askDryRun = try device.succeed(["ask", "What first?", "--dry-run", "--today", planningDay])
    let askBody = ExpectedRequestBodies.ask(
      "What first?", ExpectedRequestBodies.planningCandidates, model: "gpt-4o-mini")
    #expect(askDryRun.printedBody == askBody, "\(askDryRun.stdoutText)")
    #expect(try device.providerCalls().isEmpty)
    let still = try device.succeed(["provider", "list", "--json"])
    #expect(
      (((try still.json() as? [String: Any])?["providers"] as? [[String: Any]])?.first?["confirmed_at"]) is NSNull)
  }
}
