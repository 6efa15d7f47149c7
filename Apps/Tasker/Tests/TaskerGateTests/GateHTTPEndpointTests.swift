import AssistantKeys
import CommandKit
import TaskerGate
import XCTest

final class GateHTTPEndpointTests: XCTestCase {
  private static let good = "tk_good"
  private var verdicts: [String: Result<GateIdentity, AssistantKeyError>] = [:]
  private var toolboxes: [EchoToolbox] = []

  private func endpoint() -> GateHTTPEndpoint {
    let identity = GateIdentity(keyID: AssistantKeyID("tkid_1111111111111111"), name: "a", trust: .standard, grants: [])
    verdicts[Self.good] = .success(identity)
    return GateHTTPEndpoint(
      path: "/mcp", admission: GateHTTPAdmission(listen: try! GateListenAddress("8765")), instructions: "test",
      authenticate: { [unowned self] token in self.verdicts[token] ?? .failure(.unknownKey) },
      makeToolbox: { [unowned self] _ in
        let toolbox = EchoToolbox()
        self.toolboxes.append(toolbox)
        return toolbox
      })
  }

  private func post(
    _ endpoint: GateHTTPEndpoint, _ body: JSONValue, key: String? = good, session: String? = nil,
    extra: [String: [String]] = [:]
  ) -> HTTPResponse {
    var headers: [String: [String]] = [
      "host": ["127.0.0.1:8765"], "content-type": ["application/json"],
      "accept": ["application/json, text/event-stream"],
    ]
    if let key { headers["authorization"] = ["Bearer \(key)"] }
    if let session { headers["mcp-session-id"] = [session] }
    headers.merge(extra) { _, new in new }
    return endpoint.respond(to: HTTPRequest(method: "POST", path: "/mcp", headers: headers, body: Array(body.encoded)))
  }

  private func header(_ response: HTTPResponse, _ name: String) -> String? {
    response.headers.first { $0.name.lowercased() == name.lowercased() }?.value
  }

  private func open(_ endpoint: GateHTTPEndpoint) throws -> String {
    let response = post(
      endpoint, ["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ["protocolVersion": "2025-11-25"]])
    XCTAssertEqual(response.status, 200)
    return try XCTUnwrap(header(response, "Mcp-Session-Id"))
  }

  func testEveryRequestNeedsAVerifiedBearerKey() throws {
    let endpoint = endpoint()
    let initialize: JSONValue = ["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ["protocolVersion": "x"]]
    let missing = post(endpoint, initialize, key: nil)
    XCTAssertEqual(missing.status, 401)
    XCTAssertEqual(
      header(missing, "WWW-Authenticate"),
      "Bearer realm=\"tasker\", resource_metadata=\"http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp\"")
    let unknown = post(endpoint, initialize, key: "tk_unknown")
    XCTAssertEqual(unknown.status, 401)
    XCTAssertTrue(header(unknown, "WWW-Authenticate")?.contains("invalid_token") ?? false)
    let wrongScheme = post(endpoint, initialize, key: nil, extra: ["authorization": ["Basic dXNlcjpwYXNz"]])
    XCTAssertEqual(wrongScheme.status, 401)
    XCTAssertTrue(header(wrongScheme, "WWW-Authenticate")?.contains("invalid_request") ?? false)
    XCTAssertTrue(toolboxes.isEmpty, "no session was made for a refused key")
  }

  func testARevocationTakesEffectOnTheNextRequest() throws {
    let endpoint = endpoint()
    let session = try open(endpoint)
    let ping: JSONValue = ["jsonrpc": "2.0", "id": 2, "method": "ping"]
    XCTAssertEqual(post(endpoint, ping, session: session).status, 200)
    verdicts[Self.good] = .failure(.revoked(AssistantKeyID("tkid_1111111111111111")!))
    XCTAssertEqual(post(endpoint, ping, session: session).status, 401)
  }

  func testAnUndecidableKeyCheckIsRefusedNotServed() throws {
    let endpoint = endpoint()
    let session = try open(endpoint)
    verdicts[Self.good] = .failure(.vaultLocked)
    let response = post(endpoint, ["jsonrpc": "2.0", "id": 2, "method": "tools/list"], session: session)
    XCTAssertEqual(response.status, 503)
    XCTAssertEqual(toolboxes.first?.calls, [])
  }

  func testAMissingGrantIsA403WithInsufficientScope() throws {
    let endpoint = endpoint()
    let session = try open(endpoint)
    let response = post(
      endpoint, ["jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ["name": "secret"]], session: session)
    XCTAssertEqual(response.status, 403)
    XCTAssertEqual(
      header(response, "WWW-Authenticate"),
      "Bearer realm=\"tasker\", error=\"insufficient_scope\", scope=\"notes:read\", "
        + "resource_metadata=\"http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp\"")
    XCTAssertEqual(JSONValue.parse(response.body)?["error"]?["code"], .integer(MCPError.insufficientScopeCode))
  }

  func testSessionsAreBoundToTheKeyThatMadeThem() throws {
    let endpoint = endpoint()
    let session = try open(endpoint)
    verdicts["tk_other"] = .success(
      GateIdentity(keyID: AssistantKeyID("tkid_2222222222222222"), name: "b", trust: .elevated, grants: []))
    let ping: JSONValue = ["jsonrpc": "2.0", "id": 2, "method": "ping"]
    XCTAssertEqual(post(endpoint, ping, key: "tk_other", session: session).status, 404)
    XCTAssertEqual(post(endpoint, ping, session: "no-such-session").status, 404)
    XCTAssertEqual(post(endpoint, ping).status, 400, "a request other than initialize needs a session")
  }

  func testNotificationsGet202AndMalformedBodiesGet400() throws {
    let endpoint = endpoint()
    let session = try open(endpoint)
    XCTAssertEqual(
      post(endpoint, ["jsonrpc": "2.0", "method": "notifications/initialized"], session: session).status, 202)
    let garbage = endpoint.respond(
      to: HTTPRequest(
        method: "POST", path: "/mcp",
        headers: [
          "host": ["localhost:8765"], "authorization": ["Bearer \(Self.good)"], "content-type": ["application/json"],
          "mcp-session-id": [session],
        ], body: Array("{not json".utf8)))
    XCTAssertEqual(garbage.status, 400)
    XCTAssertEqual(JSONValue.parse(garbage.body)?["error"]?["code"], .integer(MCPError.parseErrorCode))
    XCTAssertEqual(post(endpoint, ["jsonrpc": "2.0", "id": 3, "method": 5], session: session).status, 400)
  }

  func testMethodsPathsOriginsAndMediaTypes() throws {
    let endpoint = endpoint()
    let session = try open(endpoint)
    let auth = ["host": ["[::1]:8765"], "authorization": ["Bearer \(Self.good)"], "mcp-session-id": [session]]
    let get = endpoint.respond(to: HTTPRequest(method: "GET", path: "/mcp", headers: auth, body: []))
    XCTAssertEqual(get.status, 405)
    XCTAssertEqual(header(get, "Allow"), "POST, DELETE")
    XCTAssertEqual(
      endpoint.respond(to: HTTPRequest(method: "POST", path: "/other", headers: auth, body: [])).status, 404)
    let ping: JSONValue = ["jsonrpc": "2.0", "id": 2, "method": "ping"]
    XCTAssertEqual(post(endpoint, ping, session: session, extra: ["origin": ["http://evil.example"]]).status, 403)
    XCTAssertEqual(post(endpoint, ping, session: session, extra: ["origin": ["http://localhost:3000"]]).status, 200)
    XCTAssertEqual(post(endpoint, ping, session: session, extra: ["content-type": ["text/plain"]]).status, 415)
    XCTAssertEqual(post(endpoint, ping, session: session, extra: ["accept": ["text/html"]]).status, 406)
    XCTAssertEqual(post(endpoint, ping, session: session, extra: ["mcp-protocol-version": ["2025-06-18"]]).status, 400)
    XCTAssertEqual(post(endpoint, ping, session: session, extra: ["mcp-protocol-version": ["2025-11-25"]]).status, 200)
    let delete = endpoint.respond(to: HTTPRequest(method: "DELETE", path: "/mcp", headers: auth, body: []))
    XCTAssertEqual(delete.status, 204)
    XCTAssertEqual(post(endpoint, ping, session: session).status, 404, "the session ended")
  }

  func testHostOriginAndRepeatedVersionsAreRefusedBeforeTheKeyIsLookedAt() throws {
    let endpoint = endpoint()
    let initialize: JSONValue = [
      "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ["protocolVersion": "2025-11-25"],
    ]
    let refusals: [([String: [String]], Int)] = [
      (["host": []], 400), (["host": ["127.0.0.1:8765", "127.0.0.1:8765"]], 400),
      (["host": ["evil.example:8765"]], 421),
      (["host": ["127.0.0.1:8766"]], 421), (["host": ["localhost"]], 421), (["origin": ["https://localhost"]], 403),
      (["origin": ["http://evil.example@localhost"]], 403),
      (["origin": ["http://localhost", "http://localhost"]], 403),
      (["mcp-protocol-version": ["2025-11-25", "2025-11-25"]], 400),
    ]
    for (extra, status) in refusals {
      for key in [Self.good, "tk_unknown"] {
        XCTAssertEqual(post(endpoint, initialize, key: key, extra: extra).status, status, "\(extra)")
      }
    }
    XCTAssertTrue(toolboxes.isEmpty, "nothing ran for a refused request")
    XCTAssertEqual(post(endpoint, initialize, extra: ["origin": ["http://[::1]:3000"]]).status, 200)
  }

  func testAMessageWithMethodAndResultOpensNoSessionAndRunsNothing() {
    let endpoint = endpoint()
    let both: JSONValue = [
      "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ["protocolVersion": "2025-11-25"], "result": [:],
    ]
    let response = post(endpoint, both)
    XCTAssertEqual(response.status, 400)
    XCTAssertNil(header(response, "Mcp-Session-Id"))
    XCTAssertEqual(JSONValue.parse(response.body)?["error"]?["code"], .integer(MCPError.invalidRequestCode))
    XCTAssertTrue(toolboxes.isEmpty)
  }
}
