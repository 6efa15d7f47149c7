import AssistantKeys
import CommandKit
import TaskerGate
import XCTest

/// Issue 23, break 4: one key's 1,030 sessions evicted other keys'
/// sessions. A key holds at most `maximumSessionsPerKey`; opening more
/// drops its own oldest, never another key's.
final class GateHTTPSessionCapTests: XCTestCase {
  private let identities: [String: GateIdentity] = [
    "tk_busy": GateIdentity(keyID: AssistantKeyID("tkid_1111111111111111"), name: "busy", trust: .standard, grants: []),
    "tk_quiet": GateIdentity(
      keyID: AssistantKeyID("tkid_2222222222222222"), name: "quiet", trust: .standard, grants: []),
  ]

  private func endpoint() -> GateHTTPEndpoint {
    GateHTTPEndpoint(
      path: "/mcp", admission: GateHTTPAdmission(listen: try! GateListenAddress("8765")), instructions: "test",
      authenticate: { [identities] token in identities[token].map { .success($0) } ?? .failure(.unknownKey) },
      makeToolbox: { _ in EchoToolbox() })
  }

  private func post(_ endpoint: GateHTTPEndpoint, _ body: JSONValue, key: String, session: String? = nil)
    -> HTTPResponse
  {
    var headers: [String: [String]] = [
      "host": ["127.0.0.1:8765"], "content-type": ["application/json"],
      "accept": ["application/json, text/event-stream"], "authorization": ["Bearer \(key)"],
    ]
    if let session { headers["mcp-session-id"] = [session] }
    return endpoint.respond(to: HTTPRequest(method: "POST", path: "/mcp", headers: headers, body: Array(body.encoded)))
  }

  private func open(_ endpoint: GateHTTPEndpoint, key: String) throws -> String {
    let response = post(
      endpoint, ["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ["protocolVersion": "2025-11-25"]],
      key: key)
    XCTAssertEqual(response.status, 200)
    return try XCTUnwrap(response.headers.first { $0.name.lowercased() == "mcp-session-id" }?.value)
  }

  private func alive(_ endpoint: GateHTTPEndpoint, _ session: String, key: String) -> Bool {
    post(endpoint, ["jsonrpc": "2.0", "id": 2, "method": "ping"], key: key, session: session).status == 200
  }

  func testOneKeysSessionsEvictOnlyItsOwnOldest() throws {
    let endpoint = endpoint()
    let quiet = try open(endpoint, key: "tk_quiet")
    var busy: [String] = []
    for _ in 0..<(GateHTTPEndpoint.maximumSessions + 6) { busy.append(try open(endpoint, key: "tk_busy")) }
    XCTAssertTrue(alive(endpoint, quiet, key: "tk_quiet"), "another key's session survives")
    let kept = busy.suffix(GateHTTPEndpoint.maximumSessionsPerKey)
    XCTAssertTrue(kept.allSatisfy { alive(endpoint, $0, key: "tk_busy") }, "the newest sessions are kept")
    XCTAssertFalse(alive(endpoint, busy[busy.count - GateHTTPEndpoint.maximumSessionsPerKey - 1], key: "tk_busy"))
    XCTAssertFalse(alive(endpoint, busy[0], key: "tk_busy"))
  }

  func testAKeyRecentlyUsedSessionIsKeptOverItsIdleOnes() throws {
    let endpoint = endpoint()
    let first = try open(endpoint, key: "tk_busy")
    let second = try open(endpoint, key: "tk_busy")
    for _ in 2..<GateHTTPEndpoint.maximumSessionsPerKey { _ = try open(endpoint, key: "tk_busy") }
    XCTAssertTrue(alive(endpoint, first, key: "tk_busy"), "using the first makes the second the oldest")
    _ = try open(endpoint, key: "tk_busy")
    XCTAssertTrue(alive(endpoint, first, key: "tk_busy"))
    XCTAssertFalse(alive(endpoint, second, key: "tk_busy"))
  }
}
