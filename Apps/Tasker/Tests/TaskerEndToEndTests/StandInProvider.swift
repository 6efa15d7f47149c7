import Foundation
import TaskerTestSupport

/// `Tests/ProviderStandIn/stand_in_provider.py`, a stand-in OpenAI-compatible
/// chat-completions server, running on 127.0.0.1 in a mode a test picks and
/// may change; it records every connection and every request byte for byte,
/// and is stopped when released.
final class StandInProvider: @unchecked Sendable {
  /// The port of its main listener.
  let port: Int
  /// Holds the log, the mode file and the server's standard error.
  private let directory: TemporaryDirectory
  private let process = Process()
  private let input = Pipe()

  /// Starts the server (`python3` from `PATH`) in `mode` and waits for its port.
  ///
  /// - Parameter mode: one of the modes the script's header lists.
  /// - Throws: `SetupFailure` when it does not start.
  init(mode: String) throws {
    directory = try TemporaryDirectory()
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("ProviderStandIn/stand_in_provider.py").path
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: Self.python())
    process.arguments = [script, directory.path("log.jsonl"), "--mode-file", directory.path("mode.json")]
    process.standardInput = input
    process.standardOutput = output
    _ = FileManager.default.createFile(atPath: directory.path("stderr.txt"), contents: nil)
    process.standardError = FileHandle(forWritingAtPath: directory.path("stderr.txt"))
    try Self.write(mode: mode, sleep: 10, to: directory.path("mode.json"))
    try process.run()
    var line: [UInt8] = []
    while line.last != UInt8(ascii: "\n") {
      guard let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty else { break }
      line += byte
    }
    guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    else { throw SetupFailure("the stand-in provider did not start: \(String(decoding: line, as: UTF8.self))") }
    self.port = port
  }

  deinit {
    try? input.fileHandleForWriting.close()
    process.terminate()
    process.waitUntilExit()
  }

  /// The first `python3` on `PATH`.
  private static func python() -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":")
    where FileManager.default.isExecutableFile(atPath: "\(directory)/python3") {
      return "\(directory)/python3"
    }
    return Binary.which("python3")
  }

  /// The base URL to give `tasker provider add --url`.
  var url: String { "http://127.0.0.1:\(port)/v1" }

  /// Switches the mode for the requests that follow.
  ///
  /// - Parameters:
  ///   - mode: the new mode.
  ///   - sleep: how long `slow` sleeps, in seconds.
  func set(mode: String, sleep: Int = 10) throws {
    try Self.write(mode: mode, sleep: sleep, to: directory.path("mode.json"))
  }

  private static func write(mode: String, sleep: Int, to path: String) throws {
    try Data("{\"mode\":\"\(mode)\",\"sleep\":\(sleep)}".utf8).write(
      to: URL(fileURLWithPath: path), options: .atomic)
  }

  /// Every event logged so far, in order, as JSON objects.
  func events() throws -> [[String: Any]] {
    let text = try String(contentsOfFile: directory.path("log.jsonl"), encoding: .utf8)
    return try text.split(separator: "\n").map {
      guard let event = try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] else {
        throw SetupFailure("a log line is not an object: \($0)")
      }
      return event
    }
  }

  /// The number of TCP connections accepted on either listener.
  func connectionCount() throws -> Int {
    try events().filter { $0["event"] as? String == "connection" }.count
  }

  /// Every request received on either listener, in order.
  func requests() throws -> [RecordedRequest] {
    try events().filter { $0["event"] as? String == "request" }.map(RecordedRequest.init(event:))
  }

  /// What the server wrote to its standard error (tracebacks, if any).
  func errors() -> String {
    (try? String(contentsOfFile: directory.path("stderr.txt"), encoding: .utf8)) ?? ""
  }
}

/// One request as the stand-in received it.
struct RecordedRequest {
  /// `main`, or `redirect-target` for the listener a redirect points to.
  let listener: String
  /// The request line with its CRLF.
  let requestLine: [UInt8]
  /// The raw header lines through the empty line.
  let headerBytes: [UInt8]
  /// The body as sent.
  let body: [UInt8]

  init(event: [String: Any]) throws {
    func bytes(_ key: String) throws -> [UInt8] {
      guard let text = event[key] as? String, let data = Data(base64Encoded: text) else {
        throw SetupFailure("the log's \(key) is not base64")
      }
      return [UInt8](data)
    }
    listener = event["listener"] as? String ?? ""
    requestLine = try bytes("request_line")
    headerBytes = try bytes("headers")
    body = try bytes("body")
  }

  /// Every byte received: request line, headers, body.
  var raw: [UInt8] { requestLine + headerBytes + body }

  /// The request line as text, without its CRLF.
  var line: String {
    String(decoding: requestLine, as: UTF8.self).trimmingCharacters(in: .newlines)
  }

  /// The values of every header named `name` (compared without case).
  func header(_ name: String) -> [String] {
    String(decoding: headerBytes, as: UTF8.self).components(separatedBy: "\r\n").compactMap { field in
      guard let colon = field.firstIndex(of: ":"), field[..<colon].lowercased() == name.lowercased() else {
        return nil
      }
      return field[field.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
  }

  /// The body as text.
  var bodyText: String { String(decoding: body, as: UTF8.self) }

  /// The body parsed as a JSON object.
  func bodyObject() throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
      throw SetupFailure("the body is not a JSON object")
    }
    return object
  }

  /// The user message's content, parsed as a JSON object.
  func userContent() throws -> [String: Any] {
    let messages = try bodyObject()["messages"] as? [[String: Any]] ?? []
    guard let user = messages.first(where: { $0["role"] as? String == "user" }),
      let text = user["content"] as? String,
      let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    else { throw SetupFailure("no user message with a JSON object") }
    return object
  }

  /// The candidate ids of the user message, in order.
  func candidateIDs() throws -> [String] {
    (try userContent()["candidates"] as? [[String: Any]] ?? []).map { $0["id"] as? String ?? "?" }
  }
}

extension [UInt8] {
  /// Whether `needle` occurs anywhere in these bytes.
  func contains(bytes needle: String) -> Bool {
    let pattern = [UInt8](needle.utf8)
    guard !pattern.isEmpty, pattern.count <= count else { return pattern.isEmpty }
    return (0...(count - pattern.count)).contains { start in
      self[start..<(start + pattern.count)].elementsEqual(pattern)
    }
  }
}
