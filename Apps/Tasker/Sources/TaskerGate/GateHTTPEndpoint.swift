import AssistantKeys
import CommandKit
import FoundationEssentials
import TaskSystem

/// Serves MCP's Streamable HTTP transport on one endpoint path, for
/// assistants only: every request is authenticated with its bearer key,
/// checked by `AssistantKeys` each time, so a revocation takes effect on
/// the very next request. There is no trusted mode here.
///
/// POST carries one JSON-RPC message and is answered with JSON (a
/// notification or response gets 202); GET answers 405 (this server sends
/// no messages of its own); DELETE ends a session. The revision is chosen
/// per request: an `MCP-Protocol-Version` naming a revision `initialize`
/// cannot reach (or a body carrying its version in `params._meta` without
/// that header) is answered statelessly as 2026-07-28 (`MCPStateless`);
/// anything else takes the session path of 2025-11-25 and 2025-06-18, where
/// `Mcp-Session-Id` is made at `initialize` and bound to the key that made
/// it. The bearer key is checked on every request either way. Before any of that,
/// `GateHTTPAdmission` checks `Host`, `Origin` and the headers that must
/// come at most once.
///
/// Requests are answered at once on the server's threads. Only what must
/// be is serialised: the session table (a lock held for a lookup, an
/// insert or an eviction, never while a call runs) and each session's own
/// messages (its MCP state and tools take one message at a time). The
/// store is not shared either: each call runs on a connection lent by
/// `GateStorePool`, and budgets are decided inside SQLite's write lock.
public final class GateHTTPEndpoint: @unchecked Sendable {
  /// The most sessions kept: 1,024. Beyond it the key holding the most
  /// sessions loses its least recently used one.
  public static let maximumSessions = 1_024
  /// The most sessions one key may hold: 32. A key that opens more loses
  /// its own least recently used session, never another key's.
  public static let maximumSessionsPerKey = 32

  /// Answers a presented key: the assistant's identity, or why not.
  public typealias Authenticate = (String) -> Result<GateIdentity, AssistantKeyError>
  /// Makes the tools for a new session of a verified assistant.
  public typealias MakeToolbox = (GateIdentity) -> AssistantToolProvider

  /// One session: its messages are handled one at a time (`turn`); its
  /// `lastUse` is read and written under the table's lock.
  private final class Session {
    let keyID: AssistantKeyID?
    let mcp: MCPSession
    let toolbox: AssistantToolProvider
    let turn = ThreadLock()
    var lastUse: UInt64

    init(keyID: AssistantKeyID?, mcp: MCPSession, toolbox: AssistantToolProvider, lastUse: UInt64) {
      self.keyID = keyID
      self.mcp = mcp
      self.toolbox = toolbox
      self.lastUse = lastUse
    }
  }

  private let path: String
  private let admission: GateHTTPAdmission
  private let authenticate: Authenticate
  private let makeToolbox: MakeToolbox
  private let instructions: String
  /// Guards `sessions` and `tick` alone.
  private let table = ThreadLock()
  private var sessions: [String: Session] = [:]
  private var tick: UInt64 = 0

  /// Makes the endpoint.
  ///
  /// - Parameters:
  ///   - path: the endpoint path, e.g. `/mcp`.
  ///   - admission: the `Host` and `Origin` rules of the listening address.
  ///   - instructions: what `initialize` tells clients.
  ///   - authenticate: verifies a presented key (AssistantKeys).
  ///   - makeToolbox: makes the tools for a session.
  public init(
    path: String, admission: GateHTTPAdmission, instructions: String, authenticate: @escaping Authenticate,
    makeToolbox: @escaping MakeToolbox
  ) {
    self.path = path
    self.admission = admission
    self.instructions = instructions
    self.authenticate = authenticate
    self.makeToolbox = makeToolbox
  }

  /// Answers one request. Thread-safe: requests of different sessions
  /// run at once, a session's own requests one at a time.
  ///
  /// - Parameter request: a complete request.
  /// - Returns: the response.
  public func respond(to request: HTTPRequest) -> HTTPResponse {
    if let refusal = admission.refusal(for: request.headers) { return Self.plain(refusal.status, refusal.message) }
    if request.path == Self.metadataPath || request.path == Self.metadataPath + path { return metadata(request) }
    guard request.path == path else { return Self.plain(404, "no MCP endpoint here; use \(path)") }
    let identity: GateIdentity
    switch authorize(request) {
    case .verified(let verified): identity = verified
    case .refused(let response): return response
    }
    switch request.method {
    case "POST": return post(request, identity: identity)
    case "DELETE":
      guard let id = request.single("mcp-session-id"), endSession(id, of: identity) else {
        return Self.plain(404, "no such session")
      }
      return HTTPResponse(status: 204)
    default:
      return HTTPResponse(
        status: 405, headers: [HTTPHeader("Allow", "POST, DELETE"), HTTPHeader("Content-Type", "text/plain")],
        body: Array("this endpoint takes POST (and DELETE to end a session); it opens no server stream\n".utf8))
    }
  }

  /// RFC 9728's well-known path for protected-resource metadata; the
  /// endpoint's path is also served after it (§3.1 path insertion).
  public static let metadataPath = "/.well-known/oauth-protected-resource"

  /// The resource's URL as the request reached it (its `Host` was admitted).
  private func resource(_ request: HTTPRequest) -> String { "http://\(request.single("host") ?? "")\(path)" }

  /// A `Bearer` challenge naming the metadata document (RFC 9728 §5.1).
  private func challenge(_ request: HTTPRequest, _ parameters: String = "") -> String {
    let metadata = "http://\(request.single("host") ?? "")\(Self.metadataPath)\(path)"
    return "Bearer realm=\"tasker\"\(parameters), resource_metadata=\"\(metadata)\""
  }

  /// The protected-resource metadata: bearer keys in the header, no
  /// authorization server (keys are minted by `taskkey mint`).
  private func metadata(_ request: HTTPRequest) -> HTTPResponse {
    guard request.method == "GET" else {
      return HTTPResponse(
        status: 405, headers: [HTTPHeader("Allow", "GET"), HTTPHeader("Content-Type", "text/plain")],
        body: Array("the protected-resource metadata is read with GET\n".utf8))
    }
    let document: JSONValue = .object([
      "resource": .string(resource(request)), "bearer_methods_supported": .array([.string("header")]),
      "resource_name": .string("Tasker assistant gate"),
    ])
    return Self.json(200, [], document)
  }

  private enum Authorization {
    case verified(GateIdentity)
    case refused(HTTPResponse)
  }

  private func authorize(_ request: HTTPRequest) -> Authorization {
    let token: String
    switch BearerCredential.read(request.headers) {
    case .missing:
      return .refused(Self.unauthorized(challenge: challenge(request), "an assistant key is required"))
    case .malformed:
      return .refused(
        Self.unauthorized(
          challenge: challenge(request, ", error=\"invalid_request\""),
          "send exactly one 'Authorization: Bearer tk_…' header"))
    case .token(let presented): token = presented
    }
    switch authenticate(token) {
    case .success(let identity): return .verified(identity)
    case .failure(.vaultLocked), .failure(.registryDamaged):
      return .refused(
        Self.jsonError(
          503, [],
          MCPError(
            code: MCPError.unauthorizedCode,
            message: "the key cannot be checked now (vault locked or key registry damaged); refused")))
    case .failure(let error):
      return .refused(
        Self.unauthorized(
          challenge: challenge(request, ", error=\"invalid_token\""), "assistant key refused: \(error)"))
    }
  }

  /// Whether `text` holds `word` (bytes compared as they are).
  private static func mentions(_ text: String, _ word: String) -> Bool {
    let text = Array(text.utf8)
    let word = Array(word.utf8)
    guard !word.isEmpty, text.count >= word.count else { return word.isEmpty }
    for start in 0...(text.count - word.count) where text[start..<start + word.count].elementsEqual(word) {
      return true
    }
    return false
  }

  private func post(_ request: HTTPRequest, identity: GateIdentity) -> HTTPResponse {
    guard let type = request.single("content-type"), type.lowercased().hasPrefix("application/json") else {
      return Self.plain(415, "send the JSON-RPC message as Content-Type: application/json")
    }
    if let accept = request.headers["accept"]?.joined(separator: ","),
      !Self.mentions(accept, "application/json") && !Self.mentions(accept, "*/*")
    {
      return Self.plain(406, "this endpoint answers with application/json; accept it")
    }
    guard let message = JSONValue.parse(request.body) else {
      return Self.jsonError(
        400, [], MCPError(code: MCPError.parseErrorCode, message: "parse error: the body is not valid JSON"))
    }
    if MCPStateless.isStateless(headers: request.headers, message: message) {
      return stateless(request, message: message, identity: identity)
    }
    var extra: [HTTPHeader] = []
    let session: Session
    if MCPSession.isInitialize(message) {
      let opened = openSession(for: identity)
      session = opened.session
      extra.append(HTTPHeader("Mcp-Session-Id", opened.id))
    } else {
      guard let id = request.single("mcp-session-id") else {
        return Self.jsonError(
          400, [],
          MCPError(code: MCPError.invalidRequestCode, message: "missing Mcp-Session-Id: send 'initialize' first"))
      }
      guard let found = useSession(id, of: identity) else {
        return Self.jsonError(404, [], MCPError(code: MCPError.invalidRequestCode, message: "no such session"))
      }
      session = found
    }
    session.turn.lock()
    defer { session.turn.unlock() }
    if let version = request.single("mcp-protocol-version"), !MCPSession.isInitialize(message),
      version != session.mcp.protocolVersion
    {
      return Self.plain(400, "MCP-Protocol-Version \(version.prefix(32)) does not match the session's")
    }
    session.toolbox.identity = identity
    let reply = session.mcp.handle(message)
    switch reply {
    case .accepted:
      return HTTPResponse(status: 202, headers: extra)
    case .response(let json, let error):
      return Self.json(status(for: error, request, headers: &extra), extra, json)
    case .toolResult:
      return HTTPResponse(
        status: 200, headers: [HTTPHeader("Content-Type", "application/json")] + extra, body: reply.encoded ?? [])
    }
  }

  /// A 2026-07-28 request: checked whole before anything runs, answered
  /// with tools made for this request alone; no session is made or read.
  private func stateless(_ request: HTTPRequest, message: JSONValue, identity: GateIdentity) -> HTTPResponse {
    switch MCPStateless.check(message, headers: request.headers) {
    case .accepted: return HTTPResponse(status: 202)
    case .refused(let json, let error): return Self.json(MCPStateless.status(for: error), [], json)
    case .request(let checked):
      let (json, error) = MCPStateless.answer(checked, provider: makeToolbox(identity), instructions: instructions)
      var extra: [HTTPHeader] = []
      var code = status(for: error, request, headers: &extra)
      if code == 200 || code == 400 { code = MCPStateless.status(for: error) }
      return Self.json(code, extra, json)
    }
  }

  private func status(for error: MCPError?, _ request: HTTPRequest, headers: inout [HTTPHeader]) -> Int {
    switch error?.code {
    case nil: return 200
    case MCPError.insufficientScopeCode?:
      let scope = error?.data?["scope"]?.stringValue ?? ""
      headers.append(
        HTTPHeader("WWW-Authenticate", challenge(request, ", error=\"insufficient_scope\", scope=\"\(scope)\"")))
      return 403
    case MCPError.unauthorizedCode?:
      headers.append(HTTPHeader("WWW-Authenticate", challenge(request, ", error=\"invalid_token\"")))
      return 401
    case MCPError.parseErrorCode?, MCPError.invalidRequestCode?: return 400
    default: return 200
    }
  }

  /// The session `id` when the key owns it, marked as used now.
  private func useSession(_ id: String, of identity: GateIdentity) -> Session? {
    table.lock()
    defer { table.unlock() }
    guard let found = sessions[id], found.keyID == identity.keyID else { return nil }
    tick += 1
    found.lastUse = tick
    return found
  }

  /// Ends the session `id` when the key owns it; whether it did.
  private func endSession(_ id: String, of identity: GateIdentity) -> Bool {
    table.lock()
    defer { table.unlock() }
    guard sessions[id]?.keyID == identity.keyID else { return false }
    sessions[id] = nil
    return true
  }

  private func openSession(for identity: GateIdentity) -> (id: String, session: Session) {
    let toolbox = makeToolbox(identity)
    table.lock()
    defer { table.unlock() }
    let own = sessions.filter { $0.value.keyID == identity.keyID }
    if own.count >= Self.maximumSessionsPerKey {
      dropLeastRecentlyUsed(of: own)
    } else if sessions.count >= Self.maximumSessions {
      // The table is full of other keys' sessions: the key holding the most gives up its oldest.
      let byKey = Dictionary(grouping: sessions, by: { $0.value.keyID?.text ?? "" })
      if let busiest = byKey.max(by: { $0.value.count < $1.value.count })?.value {
        dropLeastRecentlyUsed(of: Dictionary(uniqueKeysWithValues: busiest.map { ($0.key, $0.value) }))
      }
    }
    tick += 1
    let session = Session(
      keyID: identity.keyID, mcp: MCPSession(provider: toolbox, instructions: instructions), toolbox: toolbox,
      lastUse: tick)
    let id = UUID().uuidString.lowercased()
    sessions[id] = session
    return (id, session)
  }

  private func dropLeastRecentlyUsed(of candidates: [String: Session]) {
    if let oldest = candidates.min(by: { $0.value.lastUse < $1.value.lastUse }) { sessions[oldest.key] = nil }
  }

  private static func plain(_ status: Int, _ text: String) -> HTTPResponse {
    HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", "text/plain")], body: Array((text + "\n").utf8))
  }

  private static func unauthorized(challenge: String, _ message: String) -> HTTPResponse {
    jsonError(
      401, [HTTPHeader("WWW-Authenticate", challenge)], MCPError(code: MCPError.unauthorizedCode, message: message))
  }

  private static func jsonError(_ status: Int, _ headers: [HTTPHeader], _ error: MCPError) -> HTTPResponse {
    json(status, headers, ["jsonrpc": "2.0", "id": .null, "error": error.json])
  }

  private static func json(_ status: Int, _ headers: [HTTPHeader], _ body: JSONValue) -> HTTPResponse {
    HTTPResponse(
      status: status, headers: [HTTPHeader("Content-Type", "application/json")] + headers, body: body.encoded)
  }
}

/// The tools of one assistant session, told before each message which
/// identity the key verified as just now.
public protocol AssistantToolProvider: MCPToolProvider {
  /// The identity from the latest verification of the session's key.
  var identity: GateIdentity { get set }
}
