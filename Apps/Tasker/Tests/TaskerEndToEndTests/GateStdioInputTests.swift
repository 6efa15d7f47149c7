import Foundation
import TaskerTestSupport
import Testing

/// `tasker mcp` over stdio reads its lines as bytes: a line that is not
/// UTF-8 is answered with a JSON-RPC parse error, never read with U+FFFD
/// in place of the bad bytes (issue 22, break 8, for the gate's input).
@Suite("tasker mcp: standard input is UTF-8 or refused")
struct GateStdioInputTests {
  @Test func aLineThatIsNotUTF8IsAParseErrorAndTheSessionGoesOn() throws {
    let device = try TestDevice()
    var input = Array(
      (#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","#
        + #""capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"# + "\n"
        + #"{"jsonrpc":"2.0","method":"notifications/initialized"}"# + "\n").utf8)
    input += Array(
      #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_task","arguments":{"title":"a"#.utf8)
    input += [0xFF, 0xFE]
    input += Array(#""}}}"#.utf8) + [0x0A]
    input += Array(
      (#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_task","arguments":{"title":"b"}}}"#
        + "\n").utf8)
    let served = try Binary.tasker.run(["mcp"], stdin: input, environment: device.environment)
    #expect(served.status == 0, "\(served.stderr)")
    let replies = served.stdoutText.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
    #expect(replies.count == 3, "\(served.stdoutText)")
    let refused = try #require(replies.first { ($0["error"] as? [String: Any])?["code"] as? Int == -32700 })
    #expect(((refused["error"] as? [String: Any])?["message"] as? String)?.contains("UTF-8") == true)
    #expect(replies.contains { $0["id"] as? Int == 3 && $0["result"] != nil }, "the next message is served")
    let titles = try device.sqlite("SELECT title FROM tasks ORDER BY id").stdoutText
    #expect(titles == "b\n", "nothing of the bad line was stored: \(titles.debugDescription)")
  }
}
