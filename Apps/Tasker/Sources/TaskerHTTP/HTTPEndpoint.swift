/// Which kind of network a host literal names, by its text alone (no name
/// is resolved): what decides whether plain HTTP may go there.
public enum HTTPNetworkScope: String, Sendable {
  /// `localhost`, 127.0.0.0/8 or `::1`: this machine.
  case loopback
  /// 10/8, 172.16/12, 192.168/16, 169.254/16, fc00::/7 or fe80::/10.
  case privateNetwork = "private-network"
  /// Every other name or address, including every host name but `localhost`
  /// (a name may resolve anywhere).
  case publicNetwork = "public-network"
}

/// A parsed `http` or `https` URL: scheme, host, port and path (with its
/// query), in one canonical form.
///
/// Accepted: the scheme `http` or `https` (any case, kept lowercase); a host
/// that is a name (ASCII letters, digits, `-`, `_`, dots; kept lowercase), a
/// dotted-quad IPv4 address or a bracketed IPv6 address (no zone); an
/// optional port 1–65535 without leading zeros; a path of RFC 3986
/// characters with valid percent escapes, `/` when absent; a query, kept.
/// Refused: user info (`user@`), a fragment (`#`), spaces, control
/// characters and non-ASCII bytes, more than 2048 bytes, and a host whose
/// last label is numeric but which is not a dotted quad (`127.1`, `0x7f.1`,
/// `2130706433`), which resolvers read as other addresses than they seem.
public struct HTTPEndpoint: Sendable, Equatable {
  /// The longest URL text accepted, in bytes.
  static let maximumLength = 2048

  /// `http` or `https`.
  public let scheme: String
  /// The host as written (lowercase), IPv6 addresses without brackets.
  public let host: String
  /// The port, the scheme's default (80, 443) when the URL names none.
  public let port: Int
  /// The path and query, beginning with `/`.
  public let path: String

  /// Parses `text` as an `http` or `https` URL.
  ///
  /// - Parameter text: The URL, for example `https://api.example.com/v1`.
  /// - Throws: `HTTPClientError.badURL` naming the part refused.
  public init(parsing text: String) throws(HTTPClientError) {
    let bytes = Array(text.utf8)
    guard bytes.count <= Self.maximumLength else {
      throw .badURL(reason: "it is longer than \(Self.maximumLength) bytes")
    }
    guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      throw .badURL(reason: "it contains a space, a control character or a non-ASCII character")
    }
    guard !bytes.contains(UInt8(ascii: "#")) else { throw .badURL(reason: "it has a fragment (#)") }
    guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else {
      throw .badURL(reason: "it has no scheme (http:// or https://)")
    }
    let scheme = text[..<colon].lowercased()
    guard scheme == "http" || scheme == "https" else {
      throw .badURL(reason: "the scheme is not http or https")
    }
    let rest = text[colon...].dropFirst(3)
    let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
    let authority = rest[..<authorityEnd]
    guard !authority.contains("@") else { throw .badURL(reason: "it has a user name (user@host)") }
    let (host, port) = try Self.parseAuthority(authority, defaultPort: scheme == "https" ? 443 : 80)
    var path = String(rest[authorityEnd...])
    if path.hasPrefix("?") || path.isEmpty { path = "/" + path }
    try Self.checkPath(path)
    self.scheme = scheme
    self.host = host
    self.port = port
    self.path = path
  }

  private init(scheme: String, host: String, port: Int, path: String) {
    self.scheme = scheme
    self.host = host
    self.port = port
    self.path = path
  }

  /// `scheme://host[:port]`, the port written only when it is not the
  /// scheme's default.
  public var origin: String {
    let shownHost = host.contains(":") ? "[\(host)]" : host
    let defaultPort = scheme == "https" ? 443 : 80
    return port == defaultPort ? "\(scheme)://\(shownHost)" : "\(scheme)://\(shownHost):\(port)"
  }

  /// The whole URL in canonical form: `origin` followed by `path`.
  public var text: String { origin + path }

  /// The kind of network the host names, by its literal text.
  public var scope: HTTPNetworkScope {
    if host == "localhost" { return .loopback }
    if let address = IPv4Literal.parse(host) {
      switch (address[0], address[1]) {
      case (127, _): return .loopback
      case (10, _), (172, 16...31), (192, 168), (169, 254): return .privateNetwork
      default: return .publicNetwork
      }
    }
    if let address = IPv6Literal.parse(host) {
      if address == [UInt8](repeating: 0, count: 15) + [1] { return .loopback }
      if address[0] & 0xFE == 0xFC { return .privateNetwork }
      if address[0] == 0xFE && address[1] & 0xC0 == 0x80 { return .privateNetwork }
    }
    return .publicNetwork
  }

  /// This endpoint with `path` joined to its path by exactly one slash, the
  /// query (if any) kept after it: `…/v1` + `chat/completions` is
  /// `…/v1/chat/completions`.
  ///
  /// - Parameter path: Path segments separated by `/`; any byte that may
  ///   not stand in a path segment (including `?`, `#`, `%`, spaces) is
  ///   percent-encoded, so the result is always a valid endpoint.
  /// - Returns: The joined endpoint.
  public func appending(path: String) -> HTTPEndpoint {
    let queryStart = self.path.firstIndex(of: "?") ?? self.path.endIndex
    var base = String(self.path[..<queryStart])
    let query = self.path[queryStart...]
    var added = Substring(path)
    while base.hasSuffix("/") { base.removeLast() }
    while added.hasPrefix("/") { added.removeFirst() }
    var encoded = ""
    for byte in added.utf8 {
      if byte == UInt8(ascii: "/") || (Self.isPathByte(byte) && byte != UInt8(ascii: "?")) {
        encoded.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
      }
    }
    return HTTPEndpoint(scheme: scheme, host: host, port: port, path: base + "/" + encoded + query)
  }

  // MARK: - Parsing

  private static func parseAuthority(
    _ authority: Substring, defaultPort: Int
  ) throws(HTTPClientError) -> (host: String, port: Int) {
    var hostText = authority
    var portText: Substring?
    if authority.hasPrefix("[") {
      guard let close = authority.firstIndex(of: "]") else {
        throw .badURL(reason: "the IPv6 address has no closing ]")
      }
      hostText = authority[authority.index(after: authority.startIndex)..<close]
      let after = authority[authority.index(after: close)...]
      if !after.isEmpty {
        guard after.hasPrefix(":") else { throw .badURL(reason: "unexpected text after the IPv6 address") }
        portText = after.dropFirst()
      }
      guard IPv6Literal.parse(hostText) != nil else {
        throw .badURL(reason: "the IPv6 address is not valid (zones are not accepted)")
      }
    } else {
      if let colon = authority.firstIndex(of: ":") {
        hostText = authority[..<colon]
        portText = authority[authority.index(after: colon)...]
      }
      try checkHostName(hostText)
    }
    var port = defaultPort
    if let portText {
      guard let value = Int(portText), (1...65535).contains(value), !portText.hasPrefix("0"),
        portText.allSatisfy(\.isASCIIDigit)
      else { throw .badURL(reason: "the port is not a number from 1 to 65535") }
      port = value
    }
    return (hostText.lowercased(), port)
  }

  private static func checkHostName(_ host: Substring) throws(HTTPClientError) {
    guard !host.isEmpty else { throw .badURL(reason: "it has no host") }
    guard host.utf8.count <= 253 else { throw .badURL(reason: "the host name is longer than 253 bytes") }
    let labels = host.split(separator: ".", omittingEmptySubsequences: false)
    for label in labels {
      guard !label.isEmpty, label.utf8.count <= 63,
        label.allSatisfy({ $0.isASCIIDigit || $0.isASCIILetter || $0 == "-" || $0 == "_" }),
        !label.hasPrefix("-"), !label.hasSuffix("-")
      else { throw .badURL(reason: "the host is not a valid name or address") }
    }
    let last = labels[labels.count - 1].lowercased()
    let numeric = last.allSatisfy(\.isASCIIDigit) || last.hasPrefix("0x")
    if numeric && IPv4Literal.parse(host) == nil {
      throw .badURL(reason: "the host looks numeric but is not a dotted-quad IPv4 address (write a.b.c.d)")
    }
  }

  private static func checkPath(_ path: String) throws(HTTPClientError) {
    let bytes = Array(path.utf8)
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "%") {
        guard index + 2 < bytes.count, bytes[index + 1].isASCIIHexDigit, bytes[index + 2].isASCIIHexDigit else {
          throw .badURL(reason: "the path has a % not followed by two hexadecimal digits")
        }
        index += 3
        continue
      }
      guard isPathByte(byte) else {
        throw .badURL(reason: "the path contains \(Unicode.Scalar(byte)), which must be percent-encoded")
      }
      index += 1
    }
  }

  /// RFC 3986 unreserved, sub-delims, `:`, `@`, `/` and `?`.
  private static func isPathByte(_ byte: UInt8) -> Bool {
    byte.isASCIIAlphanumeric || "-._~!$&'()*+,;=:@/?".utf8.contains(byte)
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
  fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: Swift.max(0, width - count)) + self
  }
}
