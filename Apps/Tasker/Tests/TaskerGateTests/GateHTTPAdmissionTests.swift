import TaskerGate
import XCTest

final class GateHTTPAdmissionTests: XCTestCase {
  private let loopback = GateHTTPAdmission(listen: try! GateListenAddress("127.0.0.1:8765"))

  private func status(_ admission: GateHTTPAdmission, host: String = "127.0.0.1:8765", origin: [String]? = nil) -> Int?
  {
    var headers = ["host": [host]]
    headers["origin"] = origin
    return admission.refusal(for: headers)?.status
  }

  func testOnlyTheThreeLoopbackOriginsWithAValidPortAreAdmitted() {
    for origin in [
      "http://127.0.0.1", "http://localhost", "http://[::1]", "http://localhost:1", "http://127.0.0.1:65535",
      "http://[::1]:8765", "HTTP://LocalHost:3000",
    ] {
      XCTAssertNil(status(loopback, origin: [origin]), origin)
    }
    for origin in [
      "https://localhost", "ftp://localhost", "file://", "file:///etc/passwd", "chrome-extension://localhost",
      "http://evil.example@localhost", "http://@localhost", "http://localhost@evil.example", "http://localhost:99999",
      "http://localhost:65536", "http://localhost:0", "http://localhost:08765", "http://localhost:",
      "http://localhost/",
      "http://localhost/mcp", "http://localhost?", "http://localhost#", "http://localhost:80:80", "http://127.0.0.2",
      "http://[::1", "http://[::1]x", "http://[::2]", "http://::1", "http://localhost.", "http://localhost:+80",
      "http://localhost:8a", "http://", "null", "", " http://localhost", "http://localhost ", "localhost",
    ] {
      XCTAssertEqual(status(loopback, origin: [origin]), 403, origin)
    }
    XCTAssertEqual(status(loopback, origin: ["http://localhost", "http://localhost"]), 403, "two Origin headers")
    XCTAssertEqual(status(loopback, origin: []), 403, "an Origin header list that is empty is not absent")
  }

  func testHostIsALoopbackNameWithTheListeningPort() {
    for host in ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "LOCALHOST:8765"] {
      XCTAssertNil(status(loopback, host: host), host)
    }
    for host in [
      "evil.example:8765", "127.0.0.1:8766", "127.0.0.1", "localhost", "[::1]", "127.0.0.1:08765", "127.0.0.1:+8765",
      "127.0.0.2:8765", "localhost.:8765", "[::2]:8765", "::1:8765", "127.0.0.1:8765:8765", "user@localhost:8765", "",
      "127.0.0.1:", "localhost:8765/x",
    ] {
      XCTAssertEqual(status(loopback, host: host), 421, host)
    }
    XCTAssertEqual(loopback.refusal(for: [:])?.status, 400, "no Host")
    XCTAssertEqual(loopback.refusal(for: ["host": ["127.0.0.1:8765", "127.0.0.1:8765"]])?.status, 400)
  }

  func testThePortMayBeLeftOutOnlyOnPort80() throws {
    let eighty = GateHTTPAdmission(listen: try GateListenAddress("80"))
    XCTAssertNil(status(eighty, host: "localhost"))
    XCTAssertNil(status(eighty, host: "localhost:80"))
    XCTAssertEqual(status(eighty, host: "localhost:8765"), 421)
  }

  func testBeyondLoopbackTheListeningAddressAndAllowListedNamesAreAdmitted() throws {
    let lan = GateHTTPAdmission(
      listen: try GateListenAddress("192.168.1.20:8765"),
      allowedHosts: [try GateHTTPAdmission.allowedHost("Tasker.LAN")])
    for host in ["192.168.1.20:8765", "tasker.lan:8765", "TASKER.lan:8765", "localhost:8765"] {
      XCTAssertNil(status(lan, host: host), host)
    }
    for host in ["tasker.lan", "tasker.lan:8766", "other.lan:8765", "192.168.1.21:8765", "evil.tasker.lan:8765"] {
      XCTAssertEqual(status(lan, host: host), 421, host)
    }
    let any = GateHTTPAdmission(listen: try GateListenAddress("0.0.0.0:8765"))
    XCTAssertEqual(status(any, host: "0.0.0.0:8765"), 421, "the wildcard address is no host name")
  }

  func testAllowedHostNamesAreDNSNamesOrAddressesWithoutAPort() throws {
    XCTAssertEqual(try GateHTTPAdmission.allowedHost("Box-2.Lan"), "box-2.lan")
    XCTAssertEqual(try GateHTTPAdmission.allowedHost("10.0.0.7"), "10.0.0.7")
    for text in [
      "", "*", "*.lan", "a..b", ".lan", "lan.", "-a.lan", "a-.lan", "a_b.lan", "tasker.lan:8765", "[::1]", "a/b", "x@y",
      "é.lan", String(repeating: "a", count: 64), " lan",
    ] {
      XCTAssertThrowsError(try GateHTTPAdmission.allowedHost(text), text) {
        XCTAssertEqual($0 as? GateError, .invalidAllowedHost(text))
      }
    }
  }

  func testARepeatedProtocolVersionIsRefused() {
    XCTAssertEqual(
      loopback.refusal(for: ["host": ["localhost:8765"], "mcp-protocol-version": ["2025-11-25", "2025-11-25"]])?.status,
      400)
    XCTAssertNil(loopback.refusal(for: ["host": ["localhost:8765"], "mcp-protocol-version": ["2025-11-25"]]))
  }

  func testARepeatedMcpMethodOrMcpNameIsRefused() {
    for name in ["mcp-method", "mcp-name"] {
      XCTAssertEqual(
        loopback.refusal(for: ["host": ["localhost:8765"], name: ["tools/call", "tools/call"]])?.status, 400)
      XCTAssertNil(loopback.refusal(for: ["host": ["localhost:8765"], name: ["tools/call"]]))
    }
  }

  func testFramingThatCanBeReadTwoWaysIsAProblem() {
    XCTAssertNil(HTTPRequest.framingProblem([:]))
    XCTAssertNil(HTTPRequest.framingProblem(["content-length": ["0"]]))
    XCTAssertNil(HTTPRequest.framingProblem(["content-length": ["42"]]))
    XCTAssertNil(HTTPRequest.framingProblem(["transfer-encoding": ["chunked"]]))
    for lengths in [["4", "5"], ["4", "4"], ["4, 4"], ["4,5"], [""], ["+4"], ["-1"], [" 4"], ["0x10"], []] {
      XCTAssertNotNil(HTTPRequest.framingProblem(["content-length": lengths]), "\(lengths)")
    }
    XCTAssertNotNil(HTTPRequest.framingProblem(["content-length": ["4"], "transfer-encoding": ["chunked"]]))
    XCTAssertNotNil(HTTPRequest.framingProblem(["content-length": ["4"], "transfer-encoding": ["identity"]]))
  }
}
