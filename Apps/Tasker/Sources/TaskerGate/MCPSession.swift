import CommandKit
import FoundationEssentials

/// One MCP session: the initialize handshake, version negotiation, and the
/// `ping`, `tools/list` and `tools/call` requests, over any transport.
///
/// The session speaks JSON-RPC 2.0 one message at a time (no batches, as
/// MCP 2025-06-18 and later require). It answers every request exactly
/// once and never answers a notification or a response.
public final class MCPSession {
  /// The protocol revisions this gate speaks, newest first. A client that
  /// asks for another one is answered with the newest, as the
  /// specification's version negotiation says.
  public static let supportedVersions = ["2025-11-25", "2025-06-18", "2025-03-26"]

  /// The version agreed in `initialize`, nil before it.
  public private(set) var protocolVersion: String?
  private let provider: MCPToolProvider
  private let instructions: String

  /// Starts a session that has not been initialised.
  ///
  /// - Parameters:
  ///   - provider: the tools.
  ///   - instructions: what `initialize` tells the client about this server.
  public init(provider: MCPToolProvider, instructions: String) {
    self.provider = provider
    self.instructions = instructions
  }

  /// What handling one message produced.
  public enum Reply: Equatable {
    /// A notification or a response was accepted; nothing is sent back
    /// (HTTP answers 202).
    case accepted
    /// A JSON-RPC response to send back, and the error it carries, if any.
    case response(JSONValue, error: MCPError?)
    /// The response to a `tools/call` that returned a result (an `isError`
    /// one too): its id and the result, whose bytes are already written.
    case toolResult(id: JSONValue, MCPToolResult)

    /// The JSON-RPC message to send back, nil for `accepted`.
    public var message: JSONValue? {
      switch self {
      case .accepted: return nil
      case .response(let json, _): return json
      case .toolResult(let id, let result): return ["jsonrpc": "2.0", "id": id, "result": result.json]
      }
    }

    /// `message` as compact JSON bytes (sorted keys, as `JSONValue.encoded`);
    /// a tool's result is not encoded again.
    public var encoded: [UInt8]? {
      switch self {
      case .accepted: return nil
      case .response(let json, _): return json.encoded
      case .toolResult(let id, let result):
        var bytes = Array(#"{"id":"#.utf8)
        bytes.append(contentsOf: id.encoded)
        bytes.append(contentsOf: #","jsonrpc":"2.0","result":"#.utf8)
        bytes.append(contentsOf: result.encoded)
        bytes.append(UInt8(ascii: "}"))
        return bytes
      }
    }
  }

  /// Handles one message given as bytes.
  ///
  /// - Parameter bytes: one UTF-8 JSON-RPC message.
  /// - Returns: what to send back.
  public func handle<Bytes: DataProtocol>(bytes: Bytes) -> Reply {
    guard let message = JSONValue.parse(Array(bytes)) else {
      return Self.failure(
        id: .null, MCPError(code: MCPError.parseErrorCode, message: "parse error: the message is not valid JSON"))
    }
    return handle(message)
  }

  /// Handles one parsed message.
  ///
  /// - Parameter message: one JSON-RPC message.
  /// - Returns: what to send back.
  public func handle(_ message: JSONValue) -> Reply {
    let envelope: Envelope
    switch Envelope.read(message) {
    case .success(let read): envelope = read
    case .failure(let failure): return Self.failure(id: failure.id, failure.error)
    }
    guard let id = envelope.id else { return .accepted }  // a notification: never answered
    do {
      switch try answer(to: envelope) {
      case .json(let result): return .response(["jsonrpc": "2.0", "id": id, "result": result], error: nil)
      case .tool(let result): return .toolResult(id: id, result)
      }
    } catch {
      return Self.failure(id: id, error)
    }
  }

  /// A request's result: a JSON value, or a tool's result.
  private enum Answer {
    case json(JSONValue)
    case tool(MCPToolResult)
  }

  /// Whether a message is an `initialize` request (HTTP starts a session
  /// only for one); a message that also carries `result` or `error` is
  /// not one.
  ///
  /// - Parameter message: a parsed message.
  /// - Returns: true for an `initialize` request.
  public static func isInitialize(_ message: JSONValue) -> Bool {
    message["method"] == "initialize" && message["id"] != nil && message["result"] == nil && message["error"] == nil
  }

  private func answer(to envelope: Envelope) throws(MCPError) -> Answer {
    switch envelope.method {
    case "initialize": return .json(try initialize(envelope.params))
    case "ping": return .json([:])
    case "tools/list", "tools/call": break
    default:
      throw MCPError(
        code: MCPError.methodNotFoundCode, message: "method '\(envelope.method.prefix(64))' is not supported")
    }
    guard protocolVersion != nil else {
      throw MCPError(
        code: MCPError.invalidRequestCode, message: "the session is not initialised: send 'initialize' first")
    }
    if envelope.method == "tools/list" {
      return .json(["tools": .array(provider.tools.map(\.json))])
    }
    guard let name = envelope.params["name"]?.stringValue else {
      throw MCPError(code: MCPError.invalidParamsCode, message: "tools/call needs a string 'name'")
    }
    let arguments: [String: JSONValue]
    switch envelope.params["arguments"] {
    case nil, .null?: arguments = [:]
    case .object(let members)?: arguments = members
    default: throw MCPError(code: MCPError.invalidParamsCode, message: "tools/call 'arguments' must be an object")
    }
    return .tool(try provider.callTool(name: name, arguments: arguments))
  }

  private func initialize(_ params: JSONValue) throws(MCPError) -> JSONValue {
    guard protocolVersion == nil else {
      throw MCPError(code: MCPError.invalidRequestCode, message: "the session is already initialised")
    }
    guard let requested = params["protocolVersion"]?.stringValue else {
      throw MCPError(code: MCPError.invalidParamsCode, message: "initialize needs a string 'protocolVersion'")
    }
    let agreed = Self.supportedVersions.contains(requested) ? requested : Self.supportedVersions[0]
    protocolVersion = agreed
    return [
      "protocolVersion": .string(agreed),
      "capabilities": ["tools": ["listChanged": false]],
      "serverInfo": ["name": "tasker", "title": "Tasker assistant gate", "version": .string(GateVersion.current)],
      "instructions": .string(instructions),
    ]
  }

  private static func failure(id: JSONValue, _ error: MCPError) -> Reply {
    .response(["jsonrpc": "2.0", "id": id, "error": error.json], error: error)
  }
}

/// A JSON-RPC 2.0 message, checked (both revisions read messages alike).
struct Envelope {
  let id: JSONValue?
  let method: String
  let params: JSONValue

  struct Failure: Error {
    let id: JSONValue
    let error: MCPError
  }

  /// Reads a request or notification; a response from the client is read
  /// as a notification (accepted, never answered).
  static func read(_ message: JSONValue) -> Result<Envelope, Failure> {
    guard case .object(let members) = message else {
      if case .array = message {
        return .failure(
          invalid(.null, "invalid request: JSON-RPC batches are not supported; send one message at a time"))
      }
      return .failure(invalid(.null, "invalid request: a JSON-RPC message is an object"))
    }
    let id = members["id"]
    var replyID: JSONValue = .null
    switch id {
    case nil, .string?, .integer?: replyID = id ?? .null
    default:
      return .failure(invalid(.null, "invalid request: 'id' must be a string or an integer"))
    }
    guard members["jsonrpc"] == "2.0" else {
      return .failure(invalid(replyID, "invalid request: 'jsonrpc' must be \"2.0\""))
    }
    if members["method"] != nil && (members["result"] != nil || members["error"] != nil) {
      return .failure(invalid(replyID, "invalid request: a message is a request or a response, not both"))
    }
    guard let method = members["method"] else {
      if members["result"] != nil || members["error"] != nil {
        return .success(Envelope(id: nil, method: "", params: [:]))
      }
      return .failure(invalid(replyID, "invalid request: 'method' is missing"))
    }
    guard case .string(let name) = method else {
      return .failure(invalid(replyID, "invalid request: 'method' must be a string"))
    }
    let params = members["params"] ?? [:]
    guard case .object = params else {
      return .failure(invalid(replyID, "invalid request: 'params' must be an object"))
    }
    return .success(Envelope(id: id, method: name, params: params))
  }

  private static func invalid(_ id: JSONValue, _ message: String) -> Failure {
    Failure(id: id, error: MCPError(code: MCPError.invalidRequestCode, message: message))
  }
}
