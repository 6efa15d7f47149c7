import AssistantKeys
import CommandKit
import FoundationEssentials

/// Serves MCP over standard input and output: one JSON-RPC message per
/// line each way (the MCP stdio transport). Nothing but MCP messages is
/// written to standard output.
public enum GateStdio {
  /// The longest message line read: 4 MiB. A longer line is answered with
  /// an invalid-request error (-32600, id null) and the session goes on at
  /// the next line: the reader drops the long line's bytes as they come
  /// and never holds more than the limit plus one read.
  public static let maximumLine = 4 << 20

  /// One line of standard input, as bytes (never decoded with replacement).
  public enum InputLine {
    /// A line without its newline.
    case line([UInt8])
    /// A line longer than `maximumLine`, already dropped to its newline.
    case tooLong
  }

  /// Serves until standard input ends.
  ///
  /// - Parameters:
  ///   - toolbox: the tools (trusted, or for the assistant whose key
  ///     verified at start).
  ///   - reverify: for an assistant, checks the key again before every
  ///     message; nil in trusted mode.
  ///   - readLine: returns the next line's bytes, nil at the end.
  ///   - write: writes one line (a newline is added).
  public static func serve(
    toolbox: GateToolbox, reverify: (() -> Result<GateIdentity, AssistantKeyError>)?, readLine: () -> InputLine?,
    write: (String) -> Void
  ) {
    let session = MCPSession(provider: toolbox, instructions: GateInstructions.text)
    func refuse(_ code: Int64, _ message: String) {
      let error = MCPError(code: code, message: message)
      write(JSONValue.object(["jsonrpc": "2.0", "id": .null, "error": error.json]).text)
    }
    while let input = readLine() {
      guard case .line(let bytes) = input, bytes.count <= maximumLine else {
        refuse(
          MCPError.invalidRequestCode, "message longer than \(maximumLine) bytes; it was dropped, send a shorter one")
        continue
      }
      // Invalid UTF-8 is refused, never read with replacement characters.
      guard let line = String(validating: bytes, as: UTF8.self) else {
        refuse(MCPError.parseErrorCode, "message is not valid UTF-8")
        continue
      }
      if line.allSatisfy(\.isWhitespace) { continue }
      if let reverify {
        switch reverify() {
        case .success(let identity): toolbox.identity = identity
        case .failure(let error):
          let message = JSONValue.parse(Array(line.utf8))
          guard let id = message?["id"], message?["method"] != nil else { continue }
          let refusal = MCPError(code: MCPError.unauthorizedCode, message: "assistant key refused: \(error)")
          write(JSONValue.object(["jsonrpc": "2.0", "id": id, "error": refusal.json]).text)
          continue
        }
      }
      if let reply = session.handle(bytes: Data(line.utf8)).encoded { write(String(decoding: reply, as: UTF8.self)) }
    }
  }
}

/// What `initialize` tells clients about the gate.
public enum GateInstructions {
  /// The instructions text.
  public static let text =
    "Tasker's assistant gate. Tools read and change the user's tasks and pages. Each call is decided by the key's "
    + "trust level and grants, a daily budget and quiet hours: it runs, waits for the user's approval (the result "
    + "says status 'queued'), or is refused with an error that says why. Every change leaves a receipt."
}
