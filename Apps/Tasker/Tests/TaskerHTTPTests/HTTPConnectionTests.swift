import Foundation
import TaskCrypto
import Testing

@testable import TaskerHTTP

/// `HTTPConnection` against `http_test_server.py` on 127.0.0.1 (which closes
/// every connection after its answer, so each exchange here also proves
/// that a connection the server closed is opened again).
@Suite struct HTTPConnectionTests {
  static let limits = HTTPLimits(connectTimeoutSeconds: 5, totalTimeoutSeconds: 20, maximumResponseBytes: 64 << 10)

  @Test func everyExchangeCarriesItsBodyAndTheConnectionsCredential() throws {
    let server = try LocalServer()
    let connection = HTTPConnection(
      origin: try server.endpoint("/"), credential: .basic(user: "alice", password: try .text("pw")),
      allowPlainHTTP: true)
    for round in 0..<3 {
      let body = Array("round \(round)".utf8)
      let response = try connection.send("PUT", try server.endpoint("/echo"), body: body, limits: Self.limits)
      #expect(response.status == 200)
      let text = String(decoding: response.body, as: UTF8.self)
      #expect(text.hasPrefix("PUT /echo HTTP/1.1\r\n"))
      // base64("alice:pw")
      #expect(text.contains("\r\nAuthorization: Basic YWxpY2U6cHc=\r\n"))
      #expect(text.hasSuffix("\r\n\r\nround \(round)"), "no option of the exchange before carries over")
    }
    let get = try connection.send("GET", try server.endpoint("/echo"), limits: Self.limits)
    #expect(String(decoding: get.body, as: UTF8.self).hasPrefix("GET /echo HTTP/1.1\r\n"), "a GET after PUTs")
    #expect(try server.requestCount() == 4)
  }

  @Test func aRequestToAnotherOriginIsRefusedBeforeSending() throws {
    let server = try LocalServer()
    let connection = HTTPConnection(
      origin: try server.endpoint("/"), credential: .basic(user: "alice", password: try .text("pw")),
      allowPlainHTTP: true)
    let others = [
      try server.endpoint("/echo", host: "localhost"), try server.endpoint("/echo", scheme: "https"),
      try HTTPEndpoint(parsing: "http://127.0.0.1:\(try LocalServer.closedPort())/echo"),
    ]
    for other in others {
      do {
        _ = try connection.send("GET", other, limits: Self.limits)
        Issue.record("\(other.text) was sent")
      } catch {
        if case .badURL = error { continue }
        Issue.record("\(other.text): \(error), not badURL")
      }
    }
    #expect(try server.requestCount() == 0)
  }

  @Test func aFailedExchangeLeavesTheNextOneWorking() throws {
    let server = try LocalServer()
    let connection = HTTPConnection(origin: try server.endpoint("/"), credential: nil, allowPlainHTTP: true)
    #expect(throws: HTTPClientError.responseTooLarge(limit: 64 << 10)) {
      try connection.send("GET", try server.endpoint("/big?n=1000000"), limits: Self.limits)
    }
    #expect(try connection.send("GET", try server.endpoint("/big?n=600"), limits: Self.limits).body.count == 600)
    #expect(throws: HTTPClientError.plainHTTPRefused(host: "127.0.0.1")) {
      try HTTPConnection(origin: try server.endpoint("/"), credential: nil, allowPlainHTTP: false)
        .send("GET", try server.endpoint("/echo"), limits: Self.limits)
    }
  }
}
