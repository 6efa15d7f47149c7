import CommandKit
import FoundationEssentials

/// MCP revision 2026-07-28 over HTTP: every request stands alone. There is
/// no `initialize` and no `Mcp-Session-Id`; each request carries its
/// protocol version and the client's capabilities in `params._meta`, and
/// repeats its routing in headers that must agree with the body.
///
/// A request is checked in this order, the first failure answering
/// (nothing runs before all pass):
/// 1. a JSON-RPC 2.0 request or notification (not a response, not a batch):
///    else -32600;
/// 2. `params._meta` an object with `io.modelcontextprotocol/protocolVersion`
///    and `io.modelcontextprotocol/clientCapabilities`: else -32602;
/// 3. exactly one `MCP-Protocol-Version` equal to the body's version, exactly
///    one `Mcp-Method` equal to the body's `method`, and for `tools/call`
///    (`prompts/get`, `resources/read`) exactly one `Mcp-Name` equal to
///    `params.name` (`params.uri`), read through the `=?base64?…?=` form:
///    else -32020 (header mismatch);
/// 4. the version one this gate serves statelessly (`versions`): else -32022
///    with `data: {supported, requested}`.
///
/// HTTP carries each error with the status the revision gives it: 400 for
/// -32700, -32600, -32602, -32020 and -32022, 404 for -32601.
public enum MCPStateless {
  /// The stateless revisions served, newest first.
  public static let versions = ["2026-07-28"]
  /// The `_meta` key of the request's protocol version.
  public static let versionKey = "io.modelcontextprotocol/protocolVersion"
  /// The `_meta` key of the client's capabilities.
  public static let capabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
  /// The `_meta` key under which results name this server.
  public static let serverInfoKey = "io.modelcontextprotocol/serverInfo"

  /// Methods whose named parameter `Mcp-Name` repeats.
  static let nameBearing = ["tools/call": "name", "prompts/get": "name", "resources/read": "uri"]

  /// Whether a POST is for the stateless revision: its `MCP-Protocol-Version`
  /// names a revision no `initialize` reaches, or, outside a session, its
  /// body carries a per-request protocol version (an `initialize` aside);
  /// a header that then disagrees with the body is refused at step 3.
  ///
  /// - Parameters:
  ///   - headers: the request's headers, by lower-case name.
  ///   - message: the parsed body.
  /// - Returns: true to answer it statelessly.
  public static func isStateless(headers: [String: [String]], message: JSONValue) -> Bool {
    if let versions = headers["mcp-protocol-version"],
      !versions.allSatisfy({ MCPSession.supportedVersions.contains($0) })
    {
      return true
    }
    return headers["mcp-session-id"] == nil && message["params"]?["_meta"]?[versionKey] != nil
      && !MCPSession.isInitialize(message)
  }

  /// A request that passed every check.
  public struct Request: Equatable {
    /// The request's id.
    public let id: JSONValue
    /// The method.
    public let method: String
    /// The parameters (an object).
    public let params: JSONValue
    /// The protocol version it asked for, one of `versions`.
    public let version: String
  }

  /// What checking a message gave.
  public enum Checked: Equatable {
    /// A notification at a served version: accepted, never answered (202).
    case accepted
    /// A request to answer.
    case request(Request)
    /// A refusal to send back, and its error.
    case refused(JSONValue, MCPError)
  }

  /// Checks one message and its headers, steps 1 to 4.
  ///
  /// - Parameters:
  ///   - message: the parsed body.
  ///   - headers: the request's headers, by lower-case name.
  /// - Returns: the request, an accepted notification, or the refusal.
  public static func check(_ message: JSONValue, headers: [String: [String]]) -> Checked {
    let envelope: Envelope
    switch Envelope.read(message) {
    case .success(let read): envelope = read
    case .failure(let failure): return refusal(failure.id, failure.error)
    }
    guard let id = envelope.id else {
      if envelope.method.isEmpty {
        return refusal(.null, MCPError(code: MCPError.invalidRequestCode, message: "a client sends no responses here"))
      }
      if let version = headers["mcp-protocol-version"]?.first, !versions.contains(version) {
        return refusal(.null, unsupported(version))
      }
      return .accepted
    }
    guard case .object(let meta)? = envelope.params["_meta"], case .some(let asked) = meta[versionKey],
      meta[capabilitiesKey] != nil
    else {
      return refusal(
        id,
        MCPError(
          code: MCPError.invalidParamsCode,
          message: "params._meta must carry '\(versionKey)' and '\(capabilitiesKey)' on every request"))
    }
    if let mismatch = headerMismatch(envelope, asked: asked, headers: headers) { return refusal(id, mismatch) }
    guard case .string(let version) = asked, versions.contains(version) else {
      return refusal(id, unsupported(asked.stringValue ?? ""))
    }
    return .request(Request(id: id, method: envelope.method, params: envelope.params, version: version))
  }

  /// Answers a checked request with the gate's tools.
  ///
  /// - Parameters:
  ///   - request: a request `check` passed.
  ///   - provider: the tools of the key that sent it.
  ///   - instructions: what `server/discover` tells clients.
  /// - Returns: the JSON-RPC response, and the error it carries, if any.
  public static func answer(
    _ request: Request, provider: MCPToolProvider, instructions: String
  ) -> (JSONValue, MCPError?) {
    do {
      var result = try result(of: request, provider: provider, instructions: instructions)
      result["resultType"] = "complete"
      result["_meta"] = [serverInfoKey: ["name": "tasker", "version": .string(GateVersion.current)]]
      return (["jsonrpc": "2.0", "id": request.id, "result": .object(result)], nil)
    } catch {
      return (["jsonrpc": "2.0", "id": request.id, "error": error.json], error)
    }
  }

  /// The HTTP status of a stateless answer carrying `error`, before the
  /// gate's own 401 and 403.
  ///
  /// - Parameter error: the error, nil for a result.
  /// - Returns: 200, 400 or 404.
  public static func status(for error: MCPError?) -> Int {
    switch error?.code {
    case MCPError.parseErrorCode?, MCPError.invalidRequestCode?, MCPError.invalidParamsCode?,
      MCPError.headerMismatchCode?, MCPError.unsupportedProtocolVersionCode?:
      return 400
    case MCPError.methodNotFoundCode?: return 404
    default: return 200
    }
  }

  private static func result(
    of request: Request, provider: MCPToolProvider, instructions: String
  ) throws(MCPError) -> [String: JSONValue] {
    switch request.method {
    case "server/discover":
      return [
        "supportedVersions": .array(versions.map(JSONValue.string)),
        "capabilities": ["tools": ["listChanged": false]], "instructions": .string(instructions),
        "ttlMs": 0, "cacheScope": "private",
      ]
    case "tools/list":
      // Private: the list depends on the key's grants.
      return ["tools": .array(provider.tools.map(\.json)), "ttlMs": 0, "cacheScope": "private"]
    case "tools/call":
      guard let name = request.params["name"]?.stringValue else {
        throw MCPError(code: MCPError.invalidParamsCode, message: "tools/call needs a string 'name'")
      }
      let arguments: [String: JSONValue]
      switch request.params["arguments"] {
      case nil, .null?: arguments = [:]
      case .object(let members)?: arguments = members
      default: throw MCPError(code: MCPError.invalidParamsCode, message: "tools/call 'arguments' must be an object")
      }
      guard case .object(let members) = try provider.callTool(name: name, arguments: arguments).json else {
        return [:]
      }
      return members
    default:
      throw MCPError(
        code: MCPError.methodNotFoundCode,
        message: "method '\(request.method.prefix(64))' is not served at \(request.version)")
    }
  }

  private static func headerMismatch(
    _ envelope: Envelope, asked: JSONValue, headers: [String: [String]]
  ) -> MCPError? {
    func mismatch(_ text: String) -> MCPError { MCPError(code: MCPError.headerMismatchCode, message: text) }
    guard let version = headers["mcp-protocol-version"], version.count == 1, .string(version[0]) == asked else {
      return mismatch("send one MCP-Protocol-Version header equal to params._meta's '\(versionKey)'")
    }
    guard let method = headers["mcp-method"], method.count == 1, method[0] == envelope.method else {
      return mismatch("send one Mcp-Method header equal to the body's method '\(envelope.method.prefix(64))'")
    }
    if let key = nameBearing[envelope.method], let named = envelope.params[key] {
      let sent = headers["mcp-name"].flatMap { $0.count == 1 ? decodeHeaderValue($0[0]) : nil }
      guard let sent, .string(sent) == named else {
        return mismatch("send one Mcp-Name header equal to the body's params.\(key)")
      }
    }
    return nil
  }

  /// A header value as sent: verbatim, or the UTF-8 inside `=?base64?…?=`
  /// (canonical base64 only); nil for a malformed sentinel.
  static func decodeHeaderValue(_ value: String) -> String? {
    guard value.hasPrefix("=?base64?"), value.hasSuffix("?="), value.utf8.count >= 11 else { return value }
    let payload = String(value.dropFirst(9).dropLast(2))
    guard let bytes = Data(base64Encoded: payload), bytes.base64EncodedString() == payload else { return nil }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func unsupported(_ requested: String) -> MCPError {
    MCPError(
      code: MCPError.unsupportedProtocolVersionCode,
      message: "protocol version '\(requested.prefix(32))' is not served statelessly; use 2026-07-28, "
        + "or 'initialize' for 2025-11-25 or 2025-06-18",
      data: ["supported": .array(versions.map(JSONValue.string)), "requested": .string(String(requested.prefix(32)))])
  }

  private static func refusal(_ id: JSONValue, _ error: MCPError) -> Checked {
    .refused(["jsonrpc": "2.0", "id": id, "error": error.json], error)
  }
}
