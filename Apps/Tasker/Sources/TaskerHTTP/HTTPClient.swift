import CCurl
import TaskCrypto

/// Sends one HTTP/1.1 request and reads its response through Debian's
/// libcurl, with every choice that could leak a secret or reach somewhere
/// unintended made here, not left to libcurl's defaults or the environment.
///
/// What each exchange is held to:
/// - Plain `http://` only when the caller allows it and the host is a
///   loopback or private-network literal (`HTTPEndpoint.scope`); refused
///   before any connection otherwise.
/// - `https://` verifies the peer's certificate chain against the system
///   store (or `HTTPLimits.caFile`) and its name against the host
///   (`CURLOPT_SSL_VERIFYPEER` and `CURLOPT_SSL_VERIFYHOST` on; there is no
///   way to turn them off), TLS 1.2 at least.
/// - Redirects are never followed; a 3xx ends as `redirectRefused`, so a
///   bearer token never travels to a second address.
/// - Only the `http` and `https` protocols (`CURLOPT_PROTOCOLS_STR`).
/// - No proxy, whatever the environment says (`CURLOPT_PROXY ""`,
///   `CURLOPT_NOPROXY "*"`): libcurl otherwise reads `http_proxy`,
///   `https_proxy` and `ALL_PROXY`, so one variable in the user's
///   environment would send every request, bearer token and body included,
///   to a host the user never configured (and plain HTTP through a proxy is
///   not on the loopback or private network the scope check approved).
/// - No cookies (the cookie engine is never started), no `.netrc`, no
///   `Expect: 100-continue`, no compressed responses (the cap counts the
///   bytes that arrive).
/// - Connect and total timeouts; the response (headers and body) capped
///   while it streams in.
/// - Header names and values checked both ways (`HTTPClientError.headerRefused`).
///
/// The bearer token: `Authorization: Bearer <token>` is written into a
/// `SecureBytes` buffer (locked memory, wiped when released) and handed to
/// libcurl as a header-list node the client owns, not through
/// `curl_slist_append`, which would copy it into memory that
/// `curl_slist_free_all` frees without wiping. What is still not wiped:
/// libcurl formats the request head, this line included, into its own heap
/// buffer and frees it without wiping; OpenSSL then copies it into its TLS
/// record buffer (where it is encrypted in place); a plain-HTTP request
/// passes it to the kernel's socket buffer.
///
/// libcurl itself is loaded (`dlopen` of `libcurl.so.4`, then
/// `curl_global_init`) once per process, under `pthread_once`, by the first
/// `send`; a machine without Debian's `libcurl4` gets
/// `HTTPClientError.transport` saying so.
public struct HTTPClient: Sendable {
  /// The methods `send` accepts.
  static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "PROPFIND", "MKCOL"]

  /// A client; it holds no state, each `send` uses a new libcurl handle
  /// (no connection, session or cookie survives between requests;
  /// `HTTPConnection` keeps one connection to one origin instead).
  public init() {}

  /// Sends `request` and returns the final response.
  ///
  /// - Parameters:
  ///   - request: The request; its headers and bearer are checked first.
  ///   - limits: Timeouts and the response cap.
  ///   - allowPlainHTTP: Whether plain `http://` may be used to a loopback
  ///     or private-network host literal (never to any other host).
  ///   - streaming: A body to stream instead of `request.body` (only for
  ///     `PUT`), or where a 2xx answer's body goes instead of the
  ///     response's `body`; `limits.maximumResponseBytes` caps it as well.
  /// - Returns: The response, whatever its status except a redirect.
  /// - Throws: `HTTPClientError`: `plainHTTPRefused` and `headerRefused`
  ///   before any connection; `unreachable`, `timedOut`, `tlsFailed`,
  ///   `redirectRefused`, `responseTooLarge`, `transport` after. No error
  ///   carries the bearer token.
  public func send(
    _ request: HTTPRequest, limits: HTTPLimits, allowPlainHTTP: Bool, streaming: HTTPStreaming? = nil
  ) throws(HTTPClientError) -> HTTPResponse {
    try Self.check(request, allowPlainHTTP: allowPlainHTTP, streaming: streaming)
    return try Self.exchange(request, limits: limits, on: try CurlHandle(), keepConnection: false, streaming: streaming)
  }

  /// The checks made before any connection: plain HTTP only where
  /// allowed, and a known method.
  ///
  /// - Throws: `HTTPClientError.plainHTTPRefused`, `.transport`.
  static func check(
    _ request: HTTPRequest, allowPlainHTTP: Bool, streaming: HTTPStreaming? = nil
  ) throws(HTTPClientError) {
    let endpoint = request.endpoint
    if endpoint.scheme == "http" {
      guard allowPlainHTTP, endpoint.scope == .loopback || endpoint.scope == .privateNetwork else {
        throw .plainHTTPRefused(host: endpoint.host)
      }
    }
    guard methods.contains(request.method) else {
      throw .transport(reason: "the method is not one of GET, HEAD, POST, PUT, PATCH, DELETE, PROPFIND, MKCOL")
    }
    if streaming?.upload != nil, request.method != "PUT" {
      throw .transport(reason: "only a PUT streams its body")
    }
  }

  /// Sends a `request` that passed `check` on `handle` and reads the final
  /// response; with `keepConnection`, the handle may keep its connection
  /// for the next exchange (`CurlOptions.apply`).
  ///
  /// - Throws: as `send`, but for the checks of `check`.
  static func exchange(
    _ request: HTTPRequest, limits: HTTPLimits, on handle: CurlHandle, keepConnection: Bool,
    streaming: HTTPStreaming? = nil
  ) throws(HTTPClientError) -> HTTPResponse {
    let endpoint = request.endpoint
    let transfer = CurlTransfer(limit: limits.maximumResponseBytes, on: handle)
    transfer.streaming = streaming
    for header in request.headers {
      try transfer.appendHeader(HeaderField.checkedRequestLine(name: header.name, value: header.value))
    }
    // An empty "Expect:" keeps libcurl from sending Expect: 100-continue.
    try transfer.appendHeader("Expect:")
    try CurlOptions.apply(to: transfer, request: request, limits: limits, keepConnection: keepConnection)
    let line = try Self.authorizationLine(request.credential)
    let code: CURLcode = request.body.withUnsafeBytes { body in
      let bodySet = CurlOptions.setBody(body, method: request.method, on: transfer)
      guard bodySet == CURLE_OK else { return bodySet }
      guard let line else { return transfer.perform(bearerLine: nil) }
      return line.withUnsafeMutableBytes { bytes in
        transfer.perform(bearerLine: bytes.baseAddress?.assumingMemoryBound(to: CChar.self))
      }
    }
    if let refusal = transfer.refusal { throw refusal }
    guard code == CURLE_OK else {
      throw Self.failure(code, transfer: transfer, endpoint: endpoint, limits: limits, bearer: request.secret)
    }
    let status = transfer.info(long: CURLINFO_RESPONSE_CODE)
    guard !(300...399).contains(status) else { throw .redirectRefused(status: status) }
    return HTTPResponse(
      status: status, headers: transfer.headers, body: transfer.body,
      bytesSent: transfer.bytesSent, bytesReceived: transfer.bytesReceived)
  }

  /// `Authorization: Bearer <token>` and a NUL, in locked memory, or nil
  /// without a token.
  ///
  /// - Throws: `headerRefused("Authorization")` when the token is empty or
  ///   holds a byte other than visible ASCII; `transport` when locked memory
  ///   is not available.
  /// The `Authorization` line of `credential`, NUL-terminated, in locked memory.
  static func authorizationLine(_ credential: HTTPCredential?) throws(HTTPClientError) -> SecureBytes? {
    switch credential {
    case nil: return nil
    case .bearer(let token): return try bearerLine(token)
    case .basic(let user, let password): return try basicLine(user: user, password: password)
    }
  }

  /// `Authorization: Basic base64(user:password)` and a NUL.
  static func basicLine(user: String, password: SecureBytes) throws(HTTPClientError) -> SecureBytes {
    let name = Array(user.utf8)
    let usable = password.withUnsafeBytes { secret in secret.allSatisfy { $0 >= 0x20 && $0 != 0x7F } }
    guard !name.isEmpty, name.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }), usable else {
      throw .headerRefused(name: "Authorization")
    }
    let prefix = Array("Authorization: Basic ".utf8)
    do {
      let pair = try SecureBytes(zeroedCount: name.count + 1 + password.count)
      pair.withUnsafeMutableBytes { target in
        password.withUnsafeBytes { secret in
          target.copyBytes(from: name + [UInt8(ascii: ":")])
          UnsafeMutableRawBufferPointer(rebasing: target[(name.count + 1)...]).copyBytes(from: secret)
        }
      }
      let encodedCount = Base64.encodedLength(of: pair.count)
      let line = try SecureBytes(zeroedCount: prefix.count + encodedCount + 1)
      line.withUnsafeMutableBytes { target in
        target.copyBytes(from: prefix)
        pair.withUnsafeBytes { raw in
          _ = Base64.encode(
            raw, into: UnsafeMutableRawBufferPointer(rebasing: target[prefix.count..<(prefix.count + encodedCount)]))
        }
      }
      return line
    } catch {
      throw .transport(reason: "no locked memory for the Authorization header")
    }
  }

  static func bearerLine(_ bearer: SecureBytes?) throws(HTTPClientError) -> SecureBytes? {
    guard let bearer else { return nil }
    let visible = bearer.withUnsafeBytes { token in token.count > 0 && token.allSatisfy { $0 > 0x20 && $0 < 0x7F } }
    guard visible else { throw .headerRefused(name: "Authorization") }
    let prefix = Array("Authorization: Bearer ".utf8)
    let line: SecureBytes
    do {
      line = try SecureBytes(zeroedCount: prefix.count + bearer.count + 1)
    } catch {
      throw .transport(reason: "no locked memory for the Authorization header")
    }
    line.withUnsafeMutableBytes { target in
      bearer.withUnsafeBytes { token in
        target.copyBytes(from: prefix)
        UnsafeMutableRawBufferPointer(rebasing: target[prefix.count...]).copyBytes(from: token)
      }
    }
    return line
  }

  /// The error for a libcurl failure `code`.
  static func failure(
    _ code: CURLcode, transfer: CurlTransfer, endpoint: HTTPEndpoint, limits: HTTPLimits, bearer: SecureBytes?
  ) -> HTTPClientError {
    let reason = Self.withoutSecret(transfer.errorText(code), bearer)
    switch code {
    case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT:
      return .unreachable(host: endpoint.host, reason: reason)
    case CURLE_OPERATION_TIMEDOUT:
      // Never connected: the connect limit (or the total, if shorter) ran out.
      let connected = transfer.info(offset: CURLINFO_CONNECT_TIME_T) > 0
      let seconds =
        connected ? limits.totalTimeoutSeconds : min(limits.connectTimeoutSeconds, limits.totalTimeoutSeconds)
      return .timedOut(seconds: seconds)
    case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
      CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
      CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_ENGINE_NOTFOUND,
      CURLE_SSL_ENGINE_SETFAILED, CURLE_USE_SSL_FAILED:
      return .tlsFailed(host: endpoint.host, reason: reason)
    case CURLE_FILESIZE_EXCEEDED:
      return .responseTooLarge(limit: limits.maximumResponseBytes)
    case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
      return .badURL(reason: reason)
    default:
      return .transport(reason: reason)
    }
  }

  /// `text` with its control characters dropped, or a fixed text when it
  /// contains the bearer token (libcurl's messages are not expected to, but
  /// no error may carry it).
  static func withoutSecret(_ text: String, _ bearer: SecureBytes?) -> String {
    let bytes = Array(text.utf8).filter { $0 >= 0x20 && $0 != 0x7F }
    if let bearer {
      let leaks = bearer.withUnsafeBytes { token in
        token.count > 0 && bytes.count >= token.count
          && (0...(bytes.count - token.count)).contains { start in
            bytes[start..<(start + token.count)].elementsEqual(token)
          }
      }
      if leaks { return "libcurl reported an error whose text is withheld" }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
