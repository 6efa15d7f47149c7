import CommandKit

/// A JSON-RPC error as MCP carries it: a code, a message for people, and
/// optional data. The gate's own codes are in the server range.
public struct MCPError: Error, Equatable, Sendable {
  /// The JSON-RPC error code.
  public let code: Int64
  /// What went wrong and what to do, in one sentence.
  public let message: String
  /// Extra structured detail, if any.
  public let data: JSONValue?

  /// Makes an error.
  ///
  /// - Parameters:
  ///   - code: the JSON-RPC code.
  ///   - message: the message.
  ///   - data: optional detail.
  public init(code: Int64, message: String, data: JSONValue? = nil) {
    self.code = code
    self.message = message
    self.data = data
  }

  /// -32700: the message is not JSON.
  public static let parseErrorCode: Int64 = -32_700
  /// -32600: the message is not a valid JSON-RPC 2.0 request.
  public static let invalidRequestCode: Int64 = -32_600
  /// -32601: no such method.
  public static let methodNotFoundCode: Int64 = -32_601
  /// -32602: bad parameters, or an unknown tool.
  public static let invalidParamsCode: Int64 = -32_602
  /// -32603: the gate failed inside.
  public static let internalErrorCode: Int64 = -32_603
  /// -32001: the gate refused the call (budget, undecidable budget).
  public static let refusedCode: Int64 = -32_001
  /// -32002: the key was refused (malformed, unknown, revoked, expired,
  /// or could not be checked); over HTTP this comes with status 401.
  public static let unauthorizedCode: Int64 = -32_002
  /// -32003: the key lacks the grant the tool needs; over HTTP this comes
  /// with status 403 and `insufficient_scope`.
  public static let insufficientScopeCode: Int64 = -32_003
  /// -32020: a 2026-07-28 request's routing headers (`MCP-Protocol-Version`,
  /// `Mcp-Method`, `Mcp-Name`) are missing or disagree with its body; HTTP 400.
  public static let headerMismatchCode: Int64 = -32_020
  /// -32022: a 2026-07-28 request asked for a revision not served that way;
  /// `data` names the `supported` ones and the `requested` one; HTTP 400.
  public static let unsupportedProtocolVersionCode: Int64 = -32_022

  /// The error as the `error` member of a JSON-RPC response.
  public var json: JSONValue {
    var members: [String: JSONValue] = ["code": .integer(code), "message": .string(message)]
    if let data { members["data"] = data }
    return .object(members)
  }
}

/// One tool as `tools/list` describes it.
public struct MCPTool: Sendable {
  /// The tool's name, as `tools/call` names it.
  public let name: String
  /// A short human title.
  public let title: String
  /// What the tool does and what it needs.
  public let description: String
  /// The JSON Schema of its arguments (an object schema).
  public let inputSchema: JSONValue
  /// True when the tool never changes data.
  public let readOnly: Bool
  /// True when the tool may destroy data.
  public let destructive: Bool

  /// Describes a tool.
  ///
  /// - Parameters:
  ///   - name: the name `tools/call` uses.
  ///   - title: a short human title.
  ///   - description: what it does and needs.
  ///   - inputSchema: the JSON Schema of its arguments.
  ///   - readOnly: whether it never changes data.
  ///   - destructive: whether it may destroy data.
  public init(
    name: String, title: String, description: String, inputSchema: JSONValue, readOnly: Bool, destructive: Bool
  ) {
    self.name = name
    self.title = title
    self.description = description
    self.inputSchema = inputSchema
    self.readOnly = readOnly
    self.destructive = destructive
  }

  /// The tool as an element of the `tools/list` result.
  public var json: JSONValue {
    [
      "name": .string(name), "title": .string(title), "description": .string(description),
      "inputSchema": inputSchema,
      "annotations": [
        "title": .string(title), "readOnlyHint": .bool(readOnly), "destructiveHint": .bool(destructive),
        "idempotentHint": .bool(readOnly), "openWorldHint": false,
      ],
    ]
  }
}

/// What a tool call returns: structured content, echoed as JSON text for
/// clients that read text only, and whether it is a tool-level error.
public struct MCPToolResult: Equatable, Sendable {
  /// The structured result (an object).
  public let content: JSONValue
  /// A line for people, put before the JSON text.
  public let summary: String
  /// True when the tool ran but failed (for example, no such task).
  public let isError: Bool

  /// Makes a result.
  ///
  /// - Parameters:
  ///   - content: the structured result, an object.
  ///   - summary: one line for people.
  ///   - isError: whether the tool failed.
  public init(content: JSONValue, summary: String, isError: Bool = false) {
    self.content = content
    self.summary = summary
    self.isError = isError
    self.encoded = Self.encode(content: content, summary: summary, isError: isError)
  }

  /// The `tools/call` result object.
  public var json: JSONValue {
    [
      "content": [["type": "text", "text": .string(summary + "\n" + content.text)]],
      "structuredContent": content, "isError": .bool(isError),
    ]
  }

  /// `json` as compact JSON bytes, exactly `json.encoded`, written once
  /// when the result is made: the content is encoded once and used both
  /// as the text's tail and as `structuredContent`.
  public let encoded: [UInt8]

  private static func encode(content: JSONValue, summary: String, isError: Bool) -> [UInt8] {
    let structured = content.encoded
    var text = summary + "\n"
    text.append(String(decoding: structured, as: UTF8.self))
    var bytes: [UInt8] = []
    bytes.reserveCapacity(structured.count * 2 + summary.utf8.count + 96)
    // Keys in sorted order, as `JSONValue.encoded` writes them.
    bytes.append(contentsOf: #"{"content":[{"text":"#.utf8)
    JSONValue.append(string: text, to: &bytes)
    bytes.append(contentsOf: #","type":"text"}],"isError":"#.utf8)
    bytes.append(contentsOf: (isError ? "true" : "false").utf8)
    bytes.append(contentsOf: #","structuredContent":"#.utf8)
    bytes.append(contentsOf: structured)
    bytes.append(UInt8(ascii: "}"))
    return bytes
  }
}

/// What serves the tools behind an MCP session: the gate.
public protocol MCPToolProvider: AnyObject {
  /// The tools, in the order `tools/list` shows them.
  var tools: [MCPTool] { get }
  /// Runs one tool call.
  ///
  /// - Parameters:
  ///   - name: the tool's name.
  ///   - arguments: its arguments object.
  /// - Returns: the result; a tool-level failure is a result with `isError`.
  /// - Throws: `MCPError` for an unknown tool, bad arguments, a refused
  ///   key or grant, or a refused call.
  func callTool(name: String, arguments: [String: JSONValue]) throws(MCPError) -> MCPToolResult
}
