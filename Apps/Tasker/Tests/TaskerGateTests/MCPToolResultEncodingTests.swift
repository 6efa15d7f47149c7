import CommandKit
import TaskerGate
import XCTest

/// A tool's result is encoded once, when it is made (`MCPToolResult.encoded`),
/// and its reply is written around those bytes (`Reply.encoded`): both must
/// be exactly what encoding the JSON value gives.
final class MCPToolResultEncodingTests: XCTestCase {
  /// Strings that need each kind of escape, or none.
  private static let strings: [String] = [
    "", "plain", "say \"hi\"", "back\\slash", "slash / too", "line\nbreak", "tab\tand\rreturn",
    "\u{0}\u{1}\u{8}\u{b}\u{c}\u{1f}\u{7f}", "separators \u{2028} and \u{2029}", "emoji 👩‍👩‍👧 ☕️ 🏳️‍🌈",
    "combining e\u{301} a\u{30a}\u{323}", "\u{feff}BOM and \u{fffd}", "日本語のタスク", "\u{10ffff}",
  ]

  /// Contents of each shape: empty, flat, nested, every JSON kind.
  private static var contents: [JSONValue] {
    var values: [JSONValue] = [
      [:], [], .null, true, false, 0, -1, .integer(Int64.max), .integer(Int64.min), .number(0.5), .number(-1e300),
      ["tasks": []], ["tasks": [[:], [[]], [[[]]]]],
      [
        "tasks": [
          ["id": 1, "title": "a", "due": .null, "overdue": false],
          ["id": 2, "title": "b", "tags": ["x", "y"], "nested": ["deeper": ["deepest": [1, 2, [3]]]]],
        ],
        "count": 2, "receipt": "r1",
      ],
      ["zeta": 1, "alpha": 2, "Beta": 3, "_": 4, "": 5, "é": 6, "a\"b": 7],
    ]
    for text in strings {
      values.append(.string(text))
      values.append([text: .string(text), "list": [.string(text), [.string(text)]]])
    }
    return values
  }

  func testTheResultsBytesAreTheJSONValuesBytes() {
    var checked = 0
    for content in Self.contents {
      for summary in Self.strings {
        for isError in [false, true] {
          let result = MCPToolResult(content: content, summary: summary, isError: isError)
          XCTAssertEqual(
            String(decoding: result.encoded, as: UTF8.self), String(decoding: result.json.encoded, as: UTF8.self),
            "content \(content), summary \(summary.debugDescription), isError \(isError)")
          XCTAssertEqual(result.encoded, result.json.encoded)
          checked += 1
        }
      }
    }
    XCTAssertEqual(checked, Self.contents.count * Self.strings.count * 2)
  }

  func testTheBytesParseBackToTheResult() throws {
    let result = MCPToolResult(
      content: ["error": "no such task \"7\"\u{2028}", "receipt": "r9"], summary: "no\u{0} such ☕️", isError: true)
    XCTAssertEqual(JSONValue.parse(result.encoded), result.json)
    XCTAssertEqual(result.json["isError"], true)
    XCTAssertEqual(MCPToolResult(content: [:], summary: "").json["isError"], false)
  }

  func testAToolResultsReplyIsTheMessagesBytes() {
    let ids: [JSONValue] = [
      0, 1, 42, -7, .integer(Int64.max), .integer(Int64.min), "", "abc", "id \"quoted\" \\ \u{2028} ☕️", .null,
    ]
    for id in ids {
      for content in Self.contents.prefix(16) {
        let result = MCPToolResult(content: content, summary: "summary ☕️", isError: id == .null)
        let reply = MCPSession.Reply.toolResult(id: id, result)
        XCTAssertEqual(reply.encoded, reply.message?.encoded, "id \(id), content \(content)")
        XCTAssertEqual(reply.message, ["jsonrpc": "2.0", "id": id, "result": result.json])
      }
    }
    XCTAssertNil(MCPSession.Reply.accepted.encoded)
    XCTAssertNil(MCPSession.Reply.accepted.message)
    let response = MCPSession.Reply.response(["jsonrpc": "2.0", "id": 3, "result": [:]], error: nil)
    XCTAssertEqual(response.encoded, response.message?.encoded)
  }
}
