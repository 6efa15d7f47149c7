import Foundation
import TaskCrypto
import Testing

@testable import TaskerHTTP

/// Real exchanges with `http_test_server.py` on 127.0.0.1.
@Suite struct HTTPClientTests {
  let client = HTTPClient()

  @Test func theBodyAndTheAuthorizationArriveExactly() throws {
    let server = try LocalServer()
    let body = [UInt8](0...255) + Array("{\"a\":1}\r\n\r\n".utf8)
    let request = HTTPRequest(
      method: "POST", endpoint: try server.endpoint("/echo"),
      headers: [(name: "Content-Type", value: "application/json"), (name: "X-Empty", value: "")], body: body,
      bearer: try .text("sk-test.123_abc"))
    let response = try client.send(request, limits: .standard, allowPlainHTTP: true)
    #expect(response.status == 200)
    #expect(response.header("content-type") == "application/octet-stream")
    let received = response.body
    let split = try #require(received.indices.first { received[$0...].starts(with: Array("\r\n\r\n".utf8)) })
    let head = String(decoding: received[..<split], as: UTF8.self)
    let lines = head.components(separatedBy: "\r\n")
    #expect(lines[0] == "POST /echo HTTP/1.1")
    #expect(lines.filter { $0.lowercased().hasPrefix("authorization:") } == ["Authorization: Bearer sk-test.123_abc"])
    #expect(lines.contains("Content-Type: application/json"))
    #expect(lines.contains("X-Empty:"))
    #expect(lines.contains("Content-Length: \(body.count)"))
    #expect(!lines.contains { $0.lowercased().hasPrefix("expect:") }, "no Expect: 100-continue")
    #expect(!lines.contains { $0.lowercased().hasPrefix("cookie:") })
    #expect(Array(received[(split + 4)...]) == body, "the body arrives byte for byte")
    #expect(response.bytesSent == received.count, "what was sent is what the server received")
    #expect(response.bytesReceived > received.count)
  }

  @Test func aGetCarriesNoBody() throws {
    let server = try LocalServer()
    let request = HTTPRequest(
      method: "GET", endpoint: try server.endpoint("/echo?x=1"), headers: [], body: [], bearer: nil)
    let response = try client.send(request, limits: .standard, allowPlainHTTP: true)
    let head = String(decoding: response.body, as: UTF8.self)
    #expect(head.hasPrefix("GET /echo?x=1 HTTP/1.1\r\n"))
    #expect(head.hasSuffix("\r\n\r\n"))
    #expect(!head.lowercased().contains("authorization"))
  }

  @Test func aRedirectIsRefusedAndNotFollowed() throws {
    let server = try LocalServer()
    let request = HTTPRequest(
      method: "GET", endpoint: try server.endpoint("/redirect"), headers: [], body: [], bearer: try .text("secret"))
    #expect(throws: HTTPClientError.redirectRefused(status: 302)) {
      try client.send(request, limits: .standard, allowPlainHTTP: true)
    }
    #expect(try server.requestCount() == 1, "the server saw the one request, not a second to /echo")
  }

  @Test func anOversizedResponseIsStopped() throws {
    let server = try LocalServer()
    let limits = HTTPLimits(connectTimeoutSeconds: 5, totalTimeoutSeconds: 20, maximumResponseBytes: 64 << 10)
    for path in ["/big?n=1000000", "/stream?n=1048576"] {
      let request = HTTPRequest(method: "GET", endpoint: try server.endpoint(path), headers: [], body: [], bearer: nil)
      #expect(throws: HTTPClientError.responseTooLarge(limit: 64 << 10), "\(path)") {
        try client.send(request, limits: limits, allowPlainHTTP: true)
      }
    }
    let fits = HTTPRequest(
      method: "GET", endpoint: try server.endpoint("/big?n=60000"), headers: [], body: [], bearer: nil)
    #expect(try client.send(fits, limits: limits, allowPlainHTTP: true).body.count == 60000)
  }

  /// A streamed GET hands a 2xx body on in pieces, never whole; a PUT
  /// streams its body from a read function with its exact length; an
  /// answer of another status is kept only up to 64 KiB.
  @Test func bodiesStreamBothWaysAndAnErrorPageStaysSmall() throws {
    let server = try LocalServer()
    let limits = HTTPLimits(connectTimeoutSeconds: 5, totalTimeoutSeconds: 20, maximumResponseBytes: 8 << 20)
    var received: [UInt8] = []
    var pieces = 0
    let get = HTTPRequest(
      method: "GET", endpoint: try server.endpoint("/big?n=3000000"), headers: [], body: [], bearer: nil)
    let answer = try client.send(
      get, limits: limits, allowPlainHTTP: true,
      streaming: HTTPStreaming { bytes in
        received += bytes
        pieces += 1
      })
    #expect(
      answer.status == 200 && answer.body.isEmpty && received == [UInt8](repeating: UInt8(ascii: "x"), count: 3_000_000)
    )
    #expect(pieces > 1)

    let body = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
    var offset = 0
    let put = HTTPRequest(method: "PUT", endpoint: try server.endpoint("/echo"), headers: [], body: [], bearer: nil)
    let echoed = try client.send(
      put, limits: limits, allowPlainHTTP: true,
      streaming: HTTPStreaming(uploading: body.count) { buffer in
        let count = min(buffer.count, body.count - offset, 10_000)
        body[offset..<(offset + count)].withUnsafeBytes { buffer.copyMemory(from: $0) }
        offset += count
        return count
      })
    let split = try #require(echoed.body.indices.first { echoed.body[$0...].starts(with: Array("\r\n\r\n".utf8)) })
    #expect(String(decoding: echoed.body[..<split], as: UTF8.self).contains("Content-Length: 200000"))
    #expect(Array(echoed.body[(split + 4)...]) == body)

    let fail = HTTPRequest(
      method: "GET", endpoint: try server.endpoint("/fail?n=200000"), headers: [], body: [], bearer: nil)
    #expect(throws: HTTPClientError.responseTooLarge(limit: HTTPStreaming.keptErrorBodyBytes)) {
      try client.send(fail, limits: limits, allowPlainHTTP: true, streaming: HTTPStreaming { _ in })
    }
    let small = HTTPRequest(
      method: "GET", endpoint: try server.endpoint("/fail?n=100"), headers: [], body: [], bearer: nil)
    let refused = try client.send(
      small, limits: limits, allowPlainHTTP: true,
      streaming: HTTPStreaming { _ in
        Issue.record("a 500's body reached the stream")
      })
    #expect(refused.status == 500 && refused.body.count == 100)
  }

  @Test func aStalledServerTimesOut() throws {
    let server = try LocalServer()
    let limits = HTTPLimits(connectTimeoutSeconds: 1, totalTimeoutSeconds: 1, maximumResponseBytes: 1024)
    let request = HTTPRequest(
      method: "GET", endpoint: try server.endpoint("/stall"), headers: [], body: [], bearer: nil)
    #expect(throws: HTTPClientError.timedOut(seconds: 1)) {
      try client.send(request, limits: limits, allowPlainHTTP: true)
    }
  }

  @Test func aClosedPortIsUnreachable() throws {
    let port = try LocalServer.closedPort()
    let request = HTTPRequest(
      method: "GET", endpoint: try HTTPEndpoint(parsing: "http://127.0.0.1:\(port)/"), headers: [], body: [],
      bearer: try .text("tk_never_printed"))
    do {
      _ = try client.send(request, limits: .standard, allowPlainHTTP: true)
      Issue.record("a closed port answered")
    } catch {
      guard case .unreachable(let host, _) = error else { throw error }
      #expect(host == "127.0.0.1")
      #expect(!error.description.contains("tk_never_printed"))
    }
  }

  @Test func plainHTTPIsRefusedBeforeAnyConnection() throws {
    let server = try LocalServer()
    let local = HTTPRequest(method: "GET", endpoint: try server.endpoint("/echo"), headers: [], body: [], bearer: nil)
    #expect(throws: HTTPClientError.plainHTTPRefused(host: "127.0.0.1")) {
      try client.send(local, limits: .standard, allowPlainHTTP: false)
    }
    // Public names and addresses, even when plain HTTP is allowed.
    for text in ["http://example.com/", "http://8.8.8.8/", "http://localhost.example/", "http://[2001:db8::1]/"] {
      let request = HTTPRequest(
        method: "GET", endpoint: try HTTPEndpoint(parsing: text), headers: [], body: [], bearer: nil)
      #expect(throws: HTTPClientError.plainHTTPRefused(host: request.endpoint.host)) {
        try client.send(request, limits: .standard, allowPlainHTTP: true)
      }
    }
    #expect(try server.requestCount() == 0)
  }

  @Test func badRequestHeadersAndBearersAreRefusedBeforeSending() throws {
    let server = try LocalServer()
    let cases: [([(name: String, value: String)], SecureBytes?, String)] = [
      ([(name: "X-A", value: "a\r\nInjected: yes")], nil, "X-A"),
      ([(name: "X-A", value: "a\u{0}b")], nil, "X-A"),
      ([(name: "X-A", value: "a\nb")], nil, "X-A"),
      ([(name: "X-A\r\nInjected", value: "yes")], nil, "(a name that is not an HTTP token)"),
      ([(name: "X A", value: "yes")], nil, "(a name that is not an HTTP token)"),
      ([(name: "", value: "yes")], nil, "(a name that is not an HTTP token)"),
      ([(name: "authorization", value: "Bearer other")], nil, "authorization"),
      ([(name: "Host", value: "elsewhere.example")], nil, "Host"),
      ([(name: "Content-Length", value: "0")], nil, "Content-Length"),
      ([], try .text("tok\r\nX-Injected: 1"), "Authorization"),
      ([], try .text("tok en"), "Authorization"),
      ([], try .text(""), "Authorization"),
    ]
    for (headers, bearer, name) in cases {
      let request = HTTPRequest(
        method: "POST", endpoint: try server.endpoint("/echo"), headers: headers, body: [1], bearer: bearer)
      #expect(throws: HTTPClientError.headerRefused(name: name)) {
        try client.send(request, limits: .standard, allowPlainHTTP: true)
      }
    }
    #expect(try server.requestCount() == 0)
  }

  @Test func aResponseHeaderWithABareCRIsRefused() throws {
    let server = try LocalServer()
    let request = HTTPRequest(
      method: "GET", endpoint: try server.endpoint("/bad-header"), headers: [], body: [], bearer: nil)
    #expect(throws: HTTPClientError.headerRefused(name: "X-Bad")) {
      try client.send(request, limits: .standard, allowPlainHTTP: true)
    }
  }

  @Test func anUnknownMethodIsRefused() throws {
    let request = HTTPRequest(
      method: "CONNECT", endpoint: try HTTPEndpoint(parsing: "https://example.com/"), headers: [], body: [], bearer: nil
    )
    #expect(throws: HTTPClientError.self) { try client.send(request, limits: .standard, allowPlainHTTP: false) }
  }

  @Test func libcurlTextHoldingTheTokenIsWithheld() throws {
    let token = try SecureBytes.text("sk-live-42")
    #expect(
      HTTPClient.withoutSecret("failed near sk-live-42 here", token)
        == "libcurl reported an error whose text is withheld")
    #expect(HTTPClient.withoutSecret("Failed to connect\u{1B}[31m", token) == "Failed to connect[31m")
  }
}

/// HTTPS with a local TLS server and a certificate made for the test.
@Suite struct HTTPSClientTests {
  let client = HTTPClient()

  @Test func aSelfSignedCertificateFailsVerification() throws {
    let certificate = try SelfSignedCertificate()
    let server = try LocalServer(certificate: certificate.certificate, key: certificate.key)
    for host in ["127.0.0.1", "localhost"] {
      let request = HTTPRequest(
        method: "GET", endpoint: try server.endpoint("/echo", scheme: "https", host: host), headers: [], body: [],
        bearer: try .text("tk_not_sent"))
      do {
        _ = try client.send(request, limits: .standard, allowPlainHTTP: false)
        Issue.record("an unverified certificate was accepted")
      } catch {
        guard case .tlsFailed(let failedHost, _) = error else { throw error }
        #expect(failedHost == host)
      }
    }
    #expect(try server.requestCount() == 0, "no request reached the server")
  }

  @Test func theTrustedCertificateVerifiesOnlyForItsName() throws {
    let certificate = try SelfSignedCertificate()
    let server = try LocalServer(certificate: certificate.certificate, key: certificate.key)
    let limits = HTTPLimits(
      connectTimeoutSeconds: 10, totalTimeoutSeconds: 30, maximumResponseBytes: 1 << 20, caFile: certificate.certificate
    )
    let good = HTTPRequest(
      method: "POST", endpoint: try server.endpoint("/echo", scheme: "https", host: "localhost"), headers: [],
      body: Array("over TLS".utf8), bearer: try .text("tk_over_tls"))
    let response = try client.send(good, limits: limits, allowPlainHTTP: false)
    let echoed = String(decoding: response.body, as: UTF8.self)
    #expect(echoed.contains("\r\nAuthorization: Bearer tk_over_tls\r\n"))
    #expect(echoed.hasSuffix("\r\n\r\nover TLS"))
    // The same certificate for another name: the host check refuses it.
    let wrongName = HTTPRequest(
      method: "GET", endpoint: try server.endpoint("/echo", scheme: "https", host: "127.0.0.1"), headers: [],
      body: [], bearer: nil)
    do {
      _ = try client.send(wrongName, limits: limits, allowPlainHTTP: false)
      Issue.record("a certificate for localhost was accepted for 127.0.0.1")
    } catch {
      guard case .tlsFailed = error else { throw error }
    }
  }
}
