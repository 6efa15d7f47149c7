import Synchronization

/// Sends requests to one origin (scheme, host and port) with one
/// credential, keeping one connection open between them, as a browser or
/// `curl` with several URLs does: a sync's dozens of requests to its
/// WebDAV server then cost one TCP connection (and one TLS handshake)
/// rather than one each.
///
/// Every exchange is held to exactly what `HTTPClient.send` holds it to
/// (the same checks, TLS verification, timeouts, caps and refusals; see
/// `HTTPClient`); what differs is only that libcurl may keep the
/// connection for the next exchange of this instance. The connection is
/// never shared: not with another `HTTPConnection`, nor with
/// `HTTPClient.send`, and a request to another origin is refused before
/// it is sent. The credential belongs to the connection, so its requests
/// carry no other. After any failed exchange the connection is closed and
/// the next one opens a new one. Exchanges of one instance run one at a
/// time.
public final class HTTPConnection: Sendable {
  /// The origin every request must be on.
  public let origin: HTTPEndpoint
  private let credential: HTTPCredential?
  private let allowPlainHTTP: Bool
  /// The handle that holds the connection, nil until the first exchange
  /// and after a failed one; held for the whole of an exchange.
  private let kept = Mutex<CurlHandle?>(nil)

  /// A connection to `origin`'s scheme, host and port (its path is not
  /// used), authenticated with `credential`; nothing is sent yet.
  ///
  /// - Parameters:
  ///   - origin: Where every request goes.
  ///   - credential: Sent with every request, or nil.
  ///   - allowPlainHTTP: As for `HTTPClient.send`.
  public init(origin: HTTPEndpoint, credential: HTTPCredential?, allowPlainHTTP: Bool) {
    self.origin = origin
    self.credential = credential
    self.allowPlainHTTP = allowPlainHTTP
  }

  /// Sends one request on the kept connection (opening it when there is
  /// none) and returns the final response.
  ///
  /// - Parameters:
  ///   - method: One of `HTTPClient`'s methods.
  ///   - endpoint: The URL; on this connection's origin.
  ///   - headers: Request headers, checked as `HTTPClient.send` checks them.
  ///   - body: The request body.
  ///   - limits: Timeouts and the response cap of this exchange.
  ///   - streaming: A body streamed both ways instead (`HTTPClient.send`).
  /// - Returns: The response, whatever its status except a redirect.
  /// - Throws: `HTTPClientError.badURL` for an endpoint on another origin
  ///   (nothing sent); otherwise what `HTTPClient.send` throws.
  public func send(
    _ method: String, _ endpoint: HTTPEndpoint, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
    limits: HTTPLimits, streaming: HTTPStreaming? = nil
  ) throws(HTTPClientError) -> HTTPResponse {
    guard endpoint.scheme == origin.scheme, endpoint.host == origin.host, endpoint.port == origin.port else {
      throw .badURL(
        reason: "a request to \(endpoint.host):\(endpoint.port) on the connection to \(origin.host):\(origin.port)")
    }
    let request = HTTPRequest(method: method, endpoint: endpoint, headers: headers, body: body, credential: credential)
    try HTTPClient.check(request, allowPlainHTTP: allowPlainHTTP, streaming: streaming)
    return try kept.withLock { handle throws(HTTPClientError) -> HTTPResponse in
      // Taken out for the exchange and put back only when it succeeds: after any failure the
      // handle is released, closing its connection, so one in an unknown state is never reused.
      let current: CurlHandle
      if let open = handle { current = open } else { current = try CurlHandle() }
      handle = nil
      let response = try HTTPClient.exchange(
        request, limits: limits, on: current, keepConnection: true, streaming: streaming)
      handle = current
      return response
    }
  }
}
