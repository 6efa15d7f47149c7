/// Why an HTTP exchange did not happen or did not end with a response the
/// caller may read; every message says what to do next.
///
/// No case carries a request header value, the request body or the bearer
/// token: a reason is either written here or comes from libcurl's error text,
/// from which the token is removed if it ever appears (`HTTPClient.send`).
public enum HTTPClientError: Error, Equatable, CustomStringConvertible {
  /// The text is not an `http` or `https` URL this client accepts (the
  /// reason names the part refused); nothing was sent.
  case badURL(reason: String)
  /// Plain `http://` to `host` was refused before any connection: plain
  /// HTTP is allowed only when the caller allows it and the host is a
  /// loopback or private-network literal.
  case plainHTTPRefused(host: String)
  /// No connection to `host` could be made (the name did not resolve, the
  /// port is closed, no route).
  case unreachable(host: String, reason: String)
  /// The connection or the whole exchange took longer than its limit, in
  /// seconds.
  case timedOut(seconds: Int)
  /// The TLS handshake with `host` failed, or its certificate did not verify
  /// against the trusted certificates for that host name.
  case tlsFailed(host: String, reason: String)
  /// The server answered with a redirect (3xx), which is never followed.
  case redirectRefused(status: Int)
  /// The response (headers and body together) grew past `limit` bytes; the
  /// transfer was stopped there.
  case responseTooLarge(limit: Int)
  /// A header (of the request, or of the response) named `name` was refused:
  /// a control character (CR, LF, NUL) in its name or value, a name that is
  /// not an HTTP token, or a header this client sets itself.
  case headerRefused(name: String)
  /// Any other failure of the exchange (the connection dropped, the server's
  /// answer was not HTTP, memory ran out).
  case transport(reason: String)

  /// The message for the user, ending with what to do next.
  public var description: String {
    switch self {
    case .badURL(let reason):
      return "the URL is not usable: \(reason); give an http:// or https:// URL with a host and no user name"
    case .plainHTTPRefused(let host):
      return "plain http:// to \(host) was refused before connecting; use https://, "
        + "or plain http only to a loopback or private-network address when the setting allows it"
    case .unreachable(let host, let reason):
      return "could not connect to \(host): \(reason); check the address, the port and that the server runs"
    case .timedOut(let seconds):
      return "no complete answer within \(seconds) s; check that the server is up, or try again later"
    case .tlsFailed(let host, let reason):
      return "the TLS connection to \(host) failed: \(reason); check the host name and that its "
        + "certificate is issued by a trusted authority (certificate checks are never turned off)"
    case .redirectRefused(let status):
      return "the server answered \(status) (a redirect), which is not followed; "
        + "configure the final URL the server points to"
    case .responseTooLarge(let limit):
      return "the response was larger than \(limit) bytes and was stopped; check the URL, "
        + "or ask the server for less"
    case .headerRefused(let name):
      return "the header \(name) was refused (a control character, a name that is not an HTTP token, "
        + "or a header the client sets itself); remove it or fix its value"
    case .transport(let reason):
      return "the HTTP exchange failed: \(reason); try again, and check the server if it persists"
    }
  }
}
