import CommandKit
import TaskerGate
import XCTest

/// MCP 2026-07-28's per-request checks, in their order, and its answers.
final class MCPStatelessTests: XCTestCase {
  private let meta: JSONValue = [
    "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": [:],
  ]

  private func call(_ name: String = "echo", meta: JSONValue? = nil) -> JSONValue {
    [
      "jsonrpc": "2.0", "id": 4, "method": "tools/call",
      "params": ["name": .string(name), "arguments": ["text": "hi"], "_meta": meta ?? self.meta],
    ]
  }

  private func headers(method: String = "tools/call", name: String? = "echo") -> [String: [String]] {
    var headers = ["mcp-protocol-version": ["2026-07-28"], "mcp-method": [method]]
    if let name { headers["mcp-name"] = [name] }
    return headers
  }

  private func code(_ checked: MCPStateless.Checked) -> Int64? {
    if case .refused(_, let error) = checked { return error.code }
    return nil
  }

  func testRoutingFollowsTheVersionHeaderThenTheBody() {
    XCTAssertTrue(MCPStateless.isStateless(headers: ["mcp-protocol-version": ["2026-07-28"]], message: [:]))
    XCTAssertTrue(MCPStateless.isStateless(headers: ["mcp-protocol-version": ["1999-01-01"]], message: [:]))
    XCTAssertFalse(MCPStateless.isStateless(headers: ["mcp-protocol-version": ["2025-11-25"]], message: [:]))
    XCTAssertFalse(MCPStateless.isStateless(headers: ["mcp-protocol-version": ["2025-06-18"]], message: [:]))
    XCTAssertTrue(MCPStateless.isStateless(headers: [:], message: call()))
    XCTAssertFalse(MCPStateless.isStateless(headers: ["mcp-session-id": ["s"]], message: call()))
    XCTAssertFalse(MCPStateless.isStateless(headers: [:], message: ["jsonrpc": "2.0", "id": 1, "method": "ping"]))
  }

  func testAMatchingRequestPassesAndEachMismatchIsMinus32020() {
    guard case .request(let request) = MCPStateless.check(call(), headers: headers()) else {
      return XCTFail("a matching request is refused")
    }
    XCTAssertEqual(request.version, "2026-07-28")
    XCTAssertEqual(code(MCPStateless.check(call(), headers: headers(method: "tools/list"))), -32_020)
    XCTAssertEqual(code(MCPStateless.check(call(), headers: headers(name: "other"))), -32_020)
    XCTAssertEqual(code(MCPStateless.check(call(), headers: headers(name: nil))), -32_020)
    var noMethod = headers()
    noMethod["mcp-method"] = nil
    XCTAssertEqual(code(MCPStateless.check(call(), headers: noMethod)), -32_020)
    var oldVersion = headers()
    oldVersion["mcp-protocol-version"] = ["2025-11-25"]
    XCTAssertEqual(code(MCPStateless.check(call(), headers: oldVersion)), -32_020)
  }

  func testTheMetaEnvelopeComesFirstAndAnUnservedVersionIsNamed() {
    XCTAssertEqual(code(MCPStateless.check(call(meta: [:]), headers: headers())), -32_602)
    let future: JSONValue = [
      "io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": [:],
    ]
    var futureHeaders = headers()
    futureHeaders["mcp-protocol-version"] = ["2099-01-01"]
    guard case .refused(_, let error) = MCPStateless.check(call(meta: future), headers: futureHeaders) else {
      return XCTFail("an unserved version is served")
    }
    XCTAssertEqual(error.code, -32_022)
    XCTAssertEqual(error.data, ["supported": ["2026-07-28"], "requested": "2099-01-01"])
  }

  func testMcpNameIsReadThroughItsBase64Form() {
    // "echo" as =?base64?ZWNobw==?=; a non-canonical spelling is no match.
    XCTAssertNotNil(code(MCPStateless.check(call(), headers: headers(name: "=?base64?ZWNobx==?="))))
    guard case .request = MCPStateless.check(call(), headers: headers(name: "=?base64?ZWNobw==?=")) else {
      return XCTFail("the base64 form of the name is refused")
    }
  }

  func testNotificationsAreAcceptedAndResponsesRefused() {
    let note: JSONValue = ["jsonrpc": "2.0", "method": "notifications/cancelled", "params": [:]]
    XCTAssertEqual(MCPStateless.check(note, headers: headers()), .accepted)
    XCTAssertEqual(code(MCPStateless.check(["jsonrpc": "2.0", "id": 1, "result": [:]], headers: headers())), -32_600)
  }

  func testAnswersCarryTheirResultTypeAndUnknownMethodsAre404() {
    let toolbox = EchoToolbox()
    let discover: JSONValue = ["jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": ["_meta": meta]]
    guard case .request(let request) = MCPStateless.check(discover, headers: headers(method: "server/discover")) else {
      return XCTFail("discover refused")
    }
    let (json, error) = MCPStateless.answer(request, provider: toolbox, instructions: "hello")
    XCTAssertNil(error)
    XCTAssertEqual(json["result"]?["supportedVersions"], ["2026-07-28"])
    XCTAssertEqual(json["result"]?["resultType"], "complete")
    XCTAssertEqual(toolbox.calls, [], "discover runs no tool")
    let ping: JSONValue = ["jsonrpc": "2.0", "id": 2, "method": "ping", "params": ["_meta": meta]]
    guard case .request(let pinged) = MCPStateless.check(ping, headers: headers(method: "ping")) else {
      return XCTFail("ping refused before dispatch")
    }
    let (_, missing) = MCPStateless.answer(pinged, provider: toolbox, instructions: "")
    XCTAssertEqual(missing?.code, -32_601)
    XCTAssertEqual(MCPStateless.status(for: missing), 404)
    XCTAssertEqual(MCPStateless.status(for: MCPError(code: -32_020, message: "")), 400)
  }
}
