import AssistantKeys
import CommandKit
import TaskerGate
import XCTest

/// A provider with one tool that echoes, one that needs a grant, one that
/// is refused: enough to check the session's framing.
final class EchoToolbox: AssistantToolProvider {
  var identity = GateIdentity(
    keyID: AssistantKeyID("tkid_0000000000000000"), name: "test", trust: .standard, grants: [])
  var calls: [String] = []

  var tools: [MCPTool] {
    [
      MCPTool(
        name: "echo", title: "Echo", description: "Echoes its text.",
        inputSchema: ["type": "object", "properties": ["text": ["type": "string"]], "required": ["text"]],
        readOnly: true, destructive: false)
    ]
  }

  func callTool(name: String, arguments: [String: JSONValue]) throws(MCPError) -> MCPToolResult {
    calls.append(name)
    switch name {
    case "echo": return MCPToolResult(content: ["text": arguments["text"] ?? .null], summary: "echo")
    case "secret":
      throw MCPError(
        code: MCPError.insufficientScopeCode, message: "needs notes:read", data: ["scope": "notes:read"])
    case "revoked": throw MCPError(code: MCPError.unauthorizedCode, message: "assistant key refused: revoked")
    default: throw MCPError(code: MCPError.invalidParamsCode, message: "unknown tool '\(name)'")
    }
  }
}

final class MCPSessionTests: XCTestCase {
  private func request(_ id: Int64, _ method: String, _ params: JSONValue = [:]) -> JSONValue {
    ["jsonrpc": "2.0", "id": .integer(id), "method": .string(method), "params": params]
  }

  private func result(_ reply: MCPSession.Reply) -> JSONValue? {
    switch reply {
    case .response(let json, nil): return json["result"]
    case .toolResult(_, let result):
      XCTAssertEqual(reply.encoded, reply.message?.encoded, "a tool's result is written as JSONValue would write it")
      return result.json
    default: return nil
    }
  }

  private func errorCode(_ reply: MCPSession.Reply) -> Int64? {
    guard case .response(let json, let error?) = reply else { return nil }
    XCTAssertEqual(json["error"]?["code"], .integer(error.code))
    return error.code
  }

  private func initialised(version: String = "2025-11-25") -> (MCPSession, EchoToolbox) {
    let toolbox = EchoToolbox()
    let session = MCPSession(provider: toolbox, instructions: "test")
    let reply = session.handle(
      request(1, "initialize", ["protocolVersion": .string(version), "capabilities": [:], "clientInfo": ["name": "t"]]))
    XCTAssertNotNil(result(reply))
    XCTAssertEqual(session.handle(["jsonrpc": "2.0", "method": "notifications/initialized"]), .accepted)
    return (session, toolbox)
  }

  func testInitializeAgreesOnAKnownVersionAndOffersTheNewestOtherwise() {
    for (asked, agreed) in [
      ("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"), ("2024-11-05", "2025-11-25"),
      ("2099-01-01", "2025-11-25"),
    ] {
      let session = MCPSession(provider: EchoToolbox(), instructions: "test")
      let reply = session.handle(request(1, "initialize", ["protocolVersion": .string(asked), "capabilities": [:]]))
      XCTAssertEqual(result(reply)?["protocolVersion"], .string(agreed), asked)
      XCTAssertEqual(result(reply)?["capabilities"]?["tools"], ["listChanged": false])
      XCTAssertEqual(result(reply)?["serverInfo"]?["name"], "tasker")
      XCTAssertEqual(session.protocolVersion, agreed)
    }
  }

  func testRequestsBeforeInitializeAreRefusedButPingAnswers() {
    let session = MCPSession(provider: EchoToolbox(), instructions: "test")
    XCTAssertEqual(errorCode(session.handle(request(1, "tools/list"))), MCPError.invalidRequestCode)
    XCTAssertEqual(result(session.handle(request(2, "ping"))), [:])
    XCTAssertEqual(errorCode(session.handle(request(3, "server/discover"))), MCPError.methodNotFoundCode)
  }

  func testASecondInitializeIsRefused() {
    let (session, _) = initialised()
    XCTAssertEqual(
      errorCode(session.handle(request(9, "initialize", ["protocolVersion": "2025-11-25"]))),
      MCPError.invalidRequestCode)
  }

  func testToolsListAndCall() {
    let (session, toolbox) = initialised()
    let tools = result(session.handle(request(2, "tools/list")))?["tools"]
    XCTAssertEqual(tools?.arrayCount, 1)
    XCTAssertEqual(tools, .array([EchoToolbox().tools[0].json]))
    let called = result(session.handle(request(3, "tools/call", ["name": "echo", "arguments": ["text": "hi"]])))
    XCTAssertEqual(called?["structuredContent"], ["text": "hi"])
    XCTAssertEqual(called?["isError"], false)
    XCTAssertEqual(toolbox.calls, ["echo"])
  }

  func testToolErrorsBecomeJSONRPCErrorsWithTheirCodes() {
    let (session, _) = initialised()
    XCTAssertEqual(errorCode(session.handle(request(2, "tools/call", ["name": "nope"]))), MCPError.invalidParamsCode)
    XCTAssertEqual(
      errorCode(session.handle(request(3, "tools/call", ["name": "secret"]))), MCPError.insufficientScopeCode)
    XCTAssertEqual(
      errorCode(session.handle(request(4, "tools/call", ["name": "echo", "arguments": "x"]))),
      MCPError.invalidParamsCode)
    XCTAssertEqual(errorCode(session.handle(request(5, "tools/call", [:]))), MCPError.invalidParamsCode)
    XCTAssertEqual(errorCode(session.handle(request(6, "resources/list"))), MCPError.methodNotFoundCode)
  }

  func testMalformedMessagesGetTheirJSONRPCErrorAndNullID() {
    let (session, _) = initialised()
    let cases: [(String, Int64)] = [
      ("{", MCPError.parseErrorCode), ("[]", MCPError.invalidRequestCode),
      ("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCPError.invalidRequestCode),
      ("42", MCPError.invalidRequestCode), ("{\"id\":1,\"method\":\"ping\"}", MCPError.invalidRequestCode),
      ("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", MCPError.invalidRequestCode),
      ("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", MCPError.invalidRequestCode),
      ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", MCPError.invalidRequestCode),
      ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}", MCPError.invalidRequestCode),
    ]
    for (text, code) in cases {
      let reply = session.handle(bytes: Array(text.utf8))
      XCTAssertEqual(errorCode(reply), code, text)
    }
  }

  func testAMessageWithMethodAndResultOrErrorIsRefusedNotRun() {
    let toolbox = EchoToolbox()
    let session = MCPSession(provider: toolbox, instructions: "")
    _ = session.handle(["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ["protocolVersion": "2025-11-25"]])
    let call: [String: JSONValue] = [
      "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ["name": "echo", "arguments": ["text": "x"]],
    ]
    for extra: [String: JSONValue] in [["result": [:]], ["error": ["code": 1, "message": "x"]], ["result": .null]] {
      guard case .response(let json, let error) = session.handle(.object(call.merging(extra) { $1 })) else {
        return XCTFail("a request with \(extra) was not answered")
      }
      XCTAssertEqual(error?.code, MCPError.invalidRequestCode)
      XCTAssertEqual(json["id"], 2)
    }
    XCTAssertEqual(toolbox.calls, [], "nothing ran")
  }

  func testNotificationsAndClientResponsesAreNeverAnswered() {
    let (session, toolbox) = initialised()
    XCTAssertEqual(session.handle(["jsonrpc": "2.0", "method": "tools/call", "params": ["name": "echo"]]), .accepted)
    XCTAssertEqual(session.handle(["jsonrpc": "2.0", "id": 5, "result": [:]]), .accepted)
    XCTAssertEqual(toolbox.calls, [])
  }

  func testStringIDsComeBackAsSent() {
    let (session, _) = initialised()
    guard case .response(let json, nil) = session.handle(["jsonrpc": "2.0", "id": "abc", "method": "ping"]) else {
      return XCTFail("no response")
    }
    XCTAssertEqual(json["id"], "abc")
  }
}

extension JSONValue {
  var arrayCount: Int? {
    if case .array(let list) = self { return list.count }
    return nil
  }
}
