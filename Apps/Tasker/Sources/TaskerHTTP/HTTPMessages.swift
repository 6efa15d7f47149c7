import TaskCrypto

/// How a request proves who sends it; the secret stays in `SecureBytes`.
public enum HTTPCredential: Sendable {
  /// `Authorization: Bearer <token>` (a planning provider's key).
  case bearer(SecureBytes)
  /// `Authorization: Basic base64(user ":" password)` (a WebDAV server's
  /// app password, RFC 7617). The user is visible ASCII without `:`.
  case basic(user: String, password: SecureBytes)
}

/// One HTTP request to send: method, endpoint, headers, body and an
/// optional credential.
///
/// The secret stays in `SecureBytes`: `HTTPClient.send` builds the
/// `Authorization` line in locked memory it wipes, and refuses an
/// `Authorization` header among `headers`.
public struct HTTPRequest: Sendable {
  /// The method: `GET`, `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE`, or
  /// WebDAV's `PROPFIND`, `MKCOL`.
  public let method: String
  /// Where the request goes.
  public let endpoint: HTTPEndpoint
  /// Extra header fields, in order; checked by `HTTPClient.send`.
  public let headers: [(name: String, value: String)]
  /// The body, sent as it is (with a `Content-Length`); empty for none.
  public let body: [UInt8]
  /// The credential, sent as the `Authorization` header; nil for none.
  public let credential: HTTPCredential?

  /// The bearer token, when the credential is one.
  public var bearer: SecureBytes? {
    guard case .bearer(let token) = credential else { return nil }
    return token
  }

  /// The secret bytes that must never appear in an error's text.
  var secret: SecureBytes? {
    switch credential {
    case .bearer(let token): return token
    case .basic(_, let password): return password
    case nil: return nil
    }
  }

  /// A request; nothing is checked or sent until `HTTPClient.send`.
  ///
  /// - Parameters:
  ///   - method: `GET`, `HEAD`, `POST`, `PUT`, `PATCH` or `DELETE`.
  ///   - endpoint: Where the request goes.
  ///   - headers: Extra header fields (not `Authorization`, `Host`,
  ///     `Content-Length`, `Transfer-Encoding`, `Expect`, `Connection`,
  ///     which the client sets).
  ///   - body: The body; empty for none.
  ///   - bearer: The token for `Authorization: Bearer`, visible ASCII only.
  public init(
    method: String, endpoint: HTTPEndpoint, headers: [(name: String, value: String)], body: [UInt8],
    bearer: SecureBytes?
  ) {
    self.init(method: method, endpoint: endpoint, headers: headers, body: body, credential: bearer.map { .bearer($0) })
  }

  /// A request with any credential; nothing is checked or sent until
  /// `HTTPClient.send`.
  public init(
    method: String, endpoint: HTTPEndpoint, headers: [(name: String, value: String)], body: [UInt8],
    credential: HTTPCredential?
  ) {
    self.method = method
    self.endpoint = endpoint
    self.headers = headers
    self.body = body
    self.credential = credential
  }
}

/// A body streamed in both directions in flat memory: what a request
/// sends is read in pieces as libcurl asks for them, and a successful
/// (2xx) response's body is handed on in pieces as it arrives; neither is
/// held whole. Other responses' bodies are kept as usual (for messages).
public final class HTTPStreaming {
  /// The request body's exact length, sent as `Content-Length`.
  let uploadByteCount: Int
  /// Fills the buffer with the next bytes of the request body; 0 at the end.
  let upload: ((UnsafeMutableRawBufferPointer) throws -> Int)?
  /// Takes the next bytes of a 2xx response body.
  let download: ((UnsafeRawBufferPointer) throws -> Void)?
  /// The most a streamed download keeps of an answer of another status
  /// (headers included): a server cannot make it hold a large error page.
  public static let keptErrorBodyBytes = 64 << 10

  /// A stream for a `PUT` of `byteCount` bytes read by `read`.
  public init(uploading byteCount: Int, read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) {
    (uploadByteCount, upload, download) = (byteCount, read, nil)
  }

  /// A stream for a `GET` whose 2xx body goes to `write`.
  public init(downloadingInto write: @escaping (UnsafeRawBufferPointer) throws -> Void) {
    (uploadByteCount, upload, download) = (0, nil, write)
  }
}

/// The bounds of one exchange.
public struct HTTPLimits: Sendable {
  /// Seconds allowed to resolve the name and connect (TLS handshake included).
  public let connectTimeoutSeconds: Int
  /// Seconds allowed for the whole exchange, connection included.
  public let totalTimeoutSeconds: Int
  /// The most response bytes (header lines and body together) read before
  /// the transfer is stopped with `HTTPClientError.responseTooLarge`.
  public let maximumResponseBytes: Int
  /// A PEM file of the certificates to trust instead of the system's
  /// (`/etc/ssl/certs`), for a server with its own authority (and tests);
  /// nil for the system store. Peer and host are verified either way.
  public let caFile: String?

  /// Limits for one exchange.
  ///
  /// - Parameters:
  ///   - connectTimeoutSeconds: Seconds to connect, at least 1.
  ///   - totalTimeoutSeconds: Seconds for everything, at least 1.
  ///   - maximumResponseBytes: The cap on headers and body received, at
  ///     least 1.
  ///   - caFile: Certificates to trust instead of the system store.
  public init(
    connectTimeoutSeconds: Int, totalTimeoutSeconds: Int, maximumResponseBytes: Int, caFile: String? = nil
  ) {
    self.connectTimeoutSeconds = max(1, connectTimeoutSeconds)
    self.totalTimeoutSeconds = max(1, totalTimeoutSeconds)
    self.maximumResponseBytes = max(1, maximumResponseBytes)
    self.caFile = caFile
  }

  /// 10 s to connect, 120 s in all, 4 MiB of response.
  public static let standard = HTTPLimits(
    connectTimeoutSeconds: 10, totalTimeoutSeconds: 120, maximumResponseBytes: 4 << 20)
}

/// A final response (never a redirect): status, headers and body, and what
/// the exchange cost on the wire.
public struct HTTPResponse: Sendable {
  /// The status code (1xx interim responses are skipped; 3xx never arrives
  /// here).
  public let status: Int
  /// The header fields of the final response, in order, names as sent, each
  /// value without surrounding spaces; no field holds CR, LF or NUL.
  public let headers: [(name: String, value: String)]
  /// The body, at most the limit's `maximumResponseBytes`.
  public let body: [UInt8]
  /// HTTP bytes sent: the request head and the body (TLS framing not
  /// counted).
  public let bytesSent: Int
  /// HTTP bytes received: every header line (interim responses included)
  /// and the body as it came (TLS framing not counted).
  public let bytesReceived: Int

  /// The value of the first header named `name` (compared ignoring ASCII
  /// case), or nil.
  ///
  /// - Parameter name: A header name, such as `Content-Type`.
  /// - Returns: Its value, or nil when the response has no such header.
  public func header(_ name: String) -> String? {
    let wanted = name.lowercased()
    return headers.first { $0.name.lowercased() == wanted }?.value
  }
}
