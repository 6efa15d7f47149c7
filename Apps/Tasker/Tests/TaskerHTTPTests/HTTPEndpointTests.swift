import Testing

@testable import TaskerHTTP

@Suite struct HTTPEndpointTests {
  @Test func aValidURLIsParsedIntoCanonicalParts() throws {
    let endpoint = try HTTPEndpoint(parsing: "HTTPS://API.Example.com:8443/v1/chat?model=a%20b")
    #expect(endpoint.scheme == "https")
    #expect(endpoint.host == "api.example.com")
    #expect(endpoint.port == 8443)
    #expect(endpoint.path == "/v1/chat?model=a%20b")
    #expect(endpoint.origin == "https://api.example.com:8443")
    #expect(endpoint.text == "https://api.example.com:8443/v1/chat?model=a%20b")
  }

  @Test(arguments: [
    ("https://example.com", "https://example.com/", 443, "/"),
    ("http://example.com", "http://example.com/", 80, "/"),
    ("https://example.com:443/a", "https://example.com/a", 443, "/a"),
    ("http://example.com:80", "http://example.com/", 80, "/"),
    ("http://host?q=1", "http://host/?q=1", 80, "/?q=1"),
    ("http://[::1]:11434/api", "http://[::1]:11434/api", 11434, "/api"),
    ("http://[2001:DB8::1]/", "http://[2001:db8::1]/", 80, "/"),
    ("http://[::ffff:10.0.0.1]/", "http://[::ffff:10.0.0.1]/", 80, "/"),
    ("http://[1:2:3:4:5:6:7:8]/", "http://[1:2:3:4:5:6:7:8]/", 80, "/"),
    ("http://[::]/", "http://[::]/", 80, "/"),
    ("http://10.0.0.255:65535/x/", "http://10.0.0.255:65535/x/", 65535, "/x/"),
    (
      "https://my_service.internal/a:b@c!$&'()*+,;=~", "https://my_service.internal/a:b@c!$&'()*+,;=~", 443,
      "/a:b@c!$&'()*+,;=~"
    ),
  ])
  func validURLs(text: String, canonical: String, port: Int, path: String) throws {
    let endpoint = try HTTPEndpoint(parsing: text)
    #expect(endpoint.text == canonical)
    #expect(endpoint.port == port)
    #expect(endpoint.path == path)
    #expect(try HTTPEndpoint(parsing: endpoint.text) == endpoint, "the canonical text parses to the same endpoint")
  }

  @Test(arguments: [
    "", "example.com", "//example.com", "https:example.com", "ftp://example.com/", "file:///etc/passwd",
    "https://", "https:///path", "https://user@example.com/", "https://user:pw@example.com/",
    "https://example.com/#top", "https://example.com/a b", "https://exa mple.com/", "https://example.com/\u{7}",
    "https://example.com/\u{0}", "https://example.com/\r\nX: y", "https://é.example/", "https://example.com/é",
    "https://example.com:0/", "https://example.com:65536/", "https://example.com:08/", "https://example.com:/",
    "https://example.com:x/", "https://example.com:+80/", "https://127.1/", "https://0x7f.0.0.1/",
    "https://2130706433/", "https://127.0.0.01/", "https://256.0.0.1/", "https://1.2.3.4.5/",
    "https://[::1%25eth0]/", "https://[fe80::1/", "https://[1:2:3:4:5:6:7:8:9]/", "https://[1::2::3]/",
    "https://[12345::]/", "https://[:1]/", "https://[1:]/", "https://[g::1]/", "https://[::1.2.3]/",
    "https://[::1]x/", "https://example.com/%zz", "https://example.com/%4", "https://example.com/a\\b",
    "https://example.com/<script>", "https://-example.com/", "https://exa..mple.com/", "https://example.com./",
    "https://" + String(repeating: "a", count: 64) + ".com/",
    "https://example.com/" + String(repeating: "a", count: 2030),
  ])
  func invalidURLsAreRefused(text: String) {
    #expect(throws: HTTPClientError.self) { try HTTPEndpoint(parsing: text) }
  }

  @Test func theLengthLimitIsExactly2048Bytes() throws {
    let base = "https://example.com/"
    let longest = base + String(repeating: "a", count: 2048 - base.utf8.count)
    #expect(try HTTPEndpoint(parsing: longest).text == longest)
    #expect(throws: HTTPClientError.badURL(reason: "it is longer than 2048 bytes")) {
      try HTTPEndpoint(parsing: longest + "a")
    }
  }

  @Test(arguments: [
    ("localhost", HTTPNetworkScope.loopback), ("127.0.0.1", .loopback), ("127.255.1.2", .loopback),
    ("[::1]", .loopback), ("[0:0:0:0:0:0:0:1]", .loopback),
    ("10.1.2.3", .privateNetwork), ("172.16.0.1", .privateNetwork), ("172.31.255.255", .privateNetwork),
    ("192.168.1.1", .privateNetwork), ("169.254.1.1", .privateNetwork), ("[fd00::1]", .privateNetwork),
    ("[fc00::]", .privateNetwork), ("[fe80::1]", .privateNetwork), ("[febf::1]", .privateNetwork),
    ("172.15.255.255", .publicNetwork), ("172.32.0.1", .publicNetwork), ("192.169.0.1", .publicNetwork),
    ("8.8.8.8", .publicNetwork), ("0.0.0.0", .publicNetwork), ("[fec0::1]", .publicNetwork),
    ("[2001:db8::1]", .publicNetwork), ("[::ffff:127.0.0.1]", .publicNetwork), ("[::]", .publicNetwork),
    ("example.com", .publicNetwork), ("foo.localhost", .publicNetwork), ("10.example.com", .publicNetwork),
    ("nas", .publicNetwork),
  ])
  func scopesFollowTheLiteral(host: String, scope: HTTPNetworkScope) throws {
    #expect(try HTTPEndpoint(parsing: "http://\(host):8080/").scope == scope)
  }

  @Test func scopeNamesAreTheDocumentedStrings() {
    #expect(HTTPNetworkScope.privateNetwork.rawValue == "private-network")
    #expect(HTTPNetworkScope.publicNetwork.rawValue == "public-network")
    #expect(HTTPNetworkScope.loopback.rawValue == "loopback")
  }

  @Test(arguments: [
    ("https://h.example/v1", "chat/completions", "https://h.example/v1/chat/completions"),
    ("https://h.example/v1/", "/chat/completions", "https://h.example/v1/chat/completions"),
    ("https://h.example", "models", "https://h.example/models"),
    ("https://h.example/v1?key=1", "models", "https://h.example/v1/models?key=1"),
    ("https://h.example/", "a b?#%é", "https://h.example/a%20b%3F%23%25%C3%A9"),
  ])
  func appendingJoinsWithOneSlash(base: String, path: String, joined: String) throws {
    let endpoint = try HTTPEndpoint(parsing: base).appending(path: path)
    #expect(endpoint.text == joined)
    #expect(try HTTPEndpoint(parsing: joined) == endpoint, "the result is a valid endpoint")
  }
}
