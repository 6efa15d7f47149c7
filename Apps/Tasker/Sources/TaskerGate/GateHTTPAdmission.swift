/// Who may address the gate over HTTP, decided from the request's headers
/// before its key is looked at: the `Host` and `Origin` rules, and the
/// headers that must come at most once.
///
/// - `Host`: exactly one, `NAME[:PORT]`. NAME is `127.0.0.1`, `localhost`,
///   `[::1]`, the listening IPv4 address itself (an address cannot be
///   rebound by DNS), or a name the user allow-listed with `--allow-host`;
///   names compare without regard to case. PORT is the listening port
///   written in plain digits (no sign, no leading zero); it may be left
///   out only when the listening port is 80. Missing or repeated: 400
///   (RFC 9112 §3.2). One value that is not ours: 421 Misdirected Request
///   (RFC 9110 §15.5.20), as the MCP SDK's transport security answers.
/// - `Origin`: when present, exactly one, and exactly `http://HOST` or
///   `http://HOST:PORT` with HOST `127.0.0.1`, `localhost` or `[::1]` and
///   PORT 1 to 65535 in plain digits; scheme and host compare without
///   regard to case; no userinfo, path, query or fragment. Anything else
///   (`null` and the empty value included): 403.
/// - `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` sent more than
///   once: 400 (a first-copy and a last-copy reader would disagree).
public struct GateHTTPAdmission: Sendable {
  /// Why a request is refused: its status and one line for the client.
  public struct Refusal: Equatable, Sendable {
    /// The HTTP status: 400, 403 or 421.
    public let status: Int
    /// What was wrong, for the client.
    public let message: String
  }

  private let port: UInt16
  private let names: Set<String>

  /// Makes the rules for a server listening at `listen`.
  ///
  /// - Parameters:
  ///   - listen: where the server listens.
  ///   - allowedHosts: extra names `Host` may carry, each checked by
  ///     `allowedHost(_:)`.
  public init(listen: GateListenAddress, allowedHosts: [String] = []) {
    port = listen.port
    var names: Set<String> = ["127.0.0.1", "localhost", "[::1]"]
    if listen.address != [0, 0, 0, 0] { names.insert(listen.address.map(String.init).joined(separator: ".")) }
    names.formUnion(allowedHosts.map { $0.lowercased() })
    self.names = names
  }

  /// Checks a name given to `--allow-host`: a DNS name (labels of letters,
  /// digits and inner hyphens, at most 63 bytes each, 253 in all) or a
  /// dotted IPv4 address; no port, brackets, wildcard or trailing dot.
  ///
  /// - Parameter text: the argument.
  /// - Returns: the name in lower case.
  /// - Throws: `GateError.invalidAllowedHost` for anything else.
  public static func allowedHost(_ text: String) throws -> String {
    let labels = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    let valid =
      !text.isEmpty && text.utf8.count <= 253
      && labels.allSatisfy { label in
        !label.isEmpty && label.count <= 63 && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
          && label.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") }
      }
    guard valid else { throw GateError.invalidAllowedHost(text) }
    return text.lowercased()
  }

  /// The refusal for a request's headers, or nil when they are admitted.
  ///
  /// - Parameter headers: the request's headers, by lower-case name.
  /// - Returns: nil to go on to authentication.
  public func refusal(for headers: [String: [String]]) -> Refusal? {
    guard let hosts = headers["host"], hosts.count == 1 else {
      return Refusal(status: 400, message: "send exactly one Host header")
    }
    guard admitsHost(hosts[0]) else {
      return Refusal(
        status: 421,
        message: "Host \(hosts[0].prefix(64)) is not this server: use 127.0.0.1:\(port) or localhost:\(port)")
    }
    if let origins = headers["origin"], origins.count != 1 || !Self.isLoopbackOrigin(origins[0]) {
      return Refusal(
        status: 403,
        message: "origin not allowed: only http://127.0.0.1, http://localhost and http://[::1], with a port or not")
    }
    for (name, spelled) in [
      ("mcp-protocol-version", "MCP-Protocol-Version"), ("mcp-method", "Mcp-Method"), ("mcp-name", "Mcp-Name"),
    ] where (headers[name]?.count ?? 0) > 1 {
      return Refusal(status: 400, message: "send at most one \(spelled) header")
    }
    return nil
  }

  private func admitsHost(_ value: String) -> Bool {
    guard let (name, written) = Self.split(value.lowercased()), names.contains(name) else { return false }
    guard let written else { return port == 80 }
    return Self.port(written) == Int(port)
  }

  private static func isLoopbackOrigin(_ origin: String) -> Bool {
    let lowered = origin.lowercased()
    guard lowered.hasPrefix("http://"), let (name, written) = split(String(lowered.dropFirst(7))) else { return false }
    guard ["127.0.0.1", "localhost", "[::1]"].contains(name) else { return false }
    return written.map { port($0) != nil } ?? true
  }

  /// `NAME[:PORT]` into its parts; `[::1]` is the one bracketed name.
  private static func split(_ authority: String) -> (name: String, port: Substring?)? {
    if authority.hasPrefix("[") {
      guard authority.hasPrefix("[::1]") else { return nil }
      let rest = authority.dropFirst(5)
      if rest.isEmpty { return ("[::1]", nil) }
      guard rest.first == ":" else { return nil }
      return ("[::1]", rest.dropFirst())
    }
    let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count <= 2 else { return nil }
    return (String(parts[0]), parts.count == 2 ? parts[1] : nil)
  }

  /// A port in plain digits, 1 to 65535, no leading zero; nil otherwise.
  private static func port(_ text: Substring) -> Int? {
    guard (1...5).contains(text.utf8.count), text.utf8.first != UInt8(ascii: "0"),
      text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let value = Int(text),
      value <= 65_535
    else { return nil }
    return value
  }

  private static func isAlphanumeric(_ byte: UInt8) -> Bool {
    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
      || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
  }
}
