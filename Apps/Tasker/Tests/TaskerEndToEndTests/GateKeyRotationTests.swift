import Foundation
import TaskerTestSupport
import Testing

/// A process driven line by line: `tasker mcp` over stdio, or a command
/// whose standard input the test feeds in pieces.
final class LineProcess {
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private let error = Pipe()
  private var buffer = Data()
  private var nextID = 1

  init(_ binary: Binary, _ arguments: [String], environment: [String: String]) throws {
    signal(SIGPIPE, SIG_IGN)
    process.executableURL = URL(fileURLWithPath: binary.path)
    process.arguments = arguments
    var env = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
    for (key, value) in environment { env[key] = value }
    process.environment = env
    process.standardInput = input
    process.standardOutput = output
    process.standardError = error
    try process.run()
  }

  /// Writes `bytes` to the process's standard input.
  func write(_ bytes: [UInt8]) throws {
    try input.fileHandleForWriting.write(contentsOf: Data(bytes))
  }

  /// The next line of standard output.
  func readLine() throws -> String {
    while true {
      if let end = buffer.firstIndex(of: 10) {
        let line = String(decoding: buffer[buffer.startIndex..<end], as: UTF8.self)
        buffer.removeSubrange(buffer.startIndex...end)
        return line
      }
      let chunk = output.fileHandleForReading.availableData
      guard !chunk.isEmpty else {
        process.waitUntilExit()
        let stderr = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        throw SetupFailure("the process closed its output, exit \(process.terminationStatus): \(stderr)")
      }
      buffer.append(chunk)
    }
  }

  /// Sends one JSON-RPC request and returns its response.
  func request(_ method: String, _ params: [String: Any]) throws -> [String: Any] {
    let id = nextID
    nextID += 1
    let message: [String: Any] = ["jsonrpc": "2.0", "id": id, "method": method, "params": params]
    try write(Array(try JSONSerialization.data(withJSONObject: message)) + [10])
    let reply = try JSONSerialization.jsonObject(with: Data(try readLine().utf8)) as? [String: Any] ?? [:]
    guard reply["id"] as? Int == id else { throw SetupFailure("reply \(reply) to request \(id)") }
    return reply
  }

  /// `initialize`, then the `initialized` notification.
  func initializeMCP() throws {
    _ = try request(
      "initialize",
      ["protocolVersion": "2025-06-18", "capabilities": [:], "clientInfo": ["name": "test", "version": "1"]])
    try write(Array(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.utf8) + [10])
  }

  /// Calls a tool; returns its structured result, or throws for an error.
  func callTool(_ name: String, _ arguments: [String: Any]) throws -> [String: Any] {
    let reply = try request("tools/call", ["name": name, "arguments": arguments])
    guard let result = reply["result"] as? [String: Any], result["isError"] as? Bool != true,
      let content = result["structuredContent"] as? [String: Any]
    else { throw SetupFailure("\(name) failed: \(reply)") }
    return content
  }

  /// Closes standard input and waits for the exit.
  func finish() -> (status: Int32, stderr: String) {
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
    let text = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return (process.terminationStatus, text)
  }
}

extension TestDevice {
  /// `taskkey rotate`, `tasker rewrap`, `tasker keys --check OLD`, then
  /// `taskkey retire OLD` fed by `tasker keys --values`: the documented
  /// rotation, each step required to succeed.
  func rotateRewrapRetire() throws -> (old: String, new: String) {
    let old = try vault().noteKeyring().primaryID.hex
    let rotated = try taskkey(["rotate"])
    guard rotated.status == 0 else { throw SetupFailure("rotate: \(rotated.stderr)") }
    let rewrap = try tasker(["rewrap"])
    guard rewrap.status == 0 else { throw SetupFailure("rewrap: \(rewrap.stderr)") }
    let check = try tasker(["keys", "--check", old])
    guard check.status == 0 else { throw SetupFailure("keys --check: \(check.stderr)") }
    let values = try tasker(["keys", "--values"]).stdoutText
    let retired = try taskkey(["retire", old, "--input", "-", "--field", "value"], input: values)
    guard retired.status == 0 else { throw SetupFailure("retire: \(retired.stderr)") }
    return (old, try vault().noteKeyring().primaryID.hex)
  }

  /// The key id a stored value is sealed under: `tc1.<kid>:…`.
  func storedKeyID(_ sql: String) throws -> String {
    let stored = try sqlite(sql).stdoutText
    guard stored.hasPrefix("tc1."), stored.count > 12 else { throw SetupFailure("not sealed: \(stored)") }
    return String(stored.dropFirst(4).prefix(8))
  }
}

@Suite("Issue 22 break 2: no acknowledged write sealed under a key that retire removed")
struct GateKeyRotationTests {
  @Test func aLongRunningTrustedSessionSealsUnderTheNewKeyAfterARetire() throws {
    let device = try TestDevice()
    let session = try LineProcess(.tasker, ["mcp"], environment: device.environment)
    try session.initializeMCP()
    _ = try session.callTool("add_task", ["title": "before", "notes": "sealed before the rotation"])
    let (old, new) = try device.rotateRewrapRetire()
    let added = try session.callTool("add_task", ["title": "after", "notes": "acknowledged after the retire"])
    let id = try #require((added["task"] as? [String: Any])?["id"] as? Int)
    #expect(try device.storedKeyID("SELECT notes FROM tasks WHERE id = \(id)") == new)
    let shown = try device.tasker(["show", "\(id)"])
    #expect(shown.status == 0, "\(shown.stderr)")
    #expect(shown.stdoutText.hasSuffix("\nacknowledged after the retire\n"))

    let note = try session.callTool("read_note", ["id": 1])
    #expect(note["notes"] as? String == "sealed before the rotation", "a body rewrap moved opens in the session")
    _ = try session.callTool("edit_task", ["ids": [1], "notes": "edited after the retire"])
    #expect(session.finish().status == 0)
    #expect(try device.storedKeyID("SELECT notes FROM tasks WHERE id = 1") == new)
    #expect(try device.tasker(["keys", "--check", old]).status == 0)
  }

  @Test func queuedApprovalsFollowTheRotationAndDenyNeedsNoKey() throws {
    let device = try TestDevice()
    let minted = try #require(
      try device.taskkey(["mint", "--name", "planner", "--trust", "restricted", "--grant", "tasks:write", "--json"])
        .json() as? [String: Any])
    var environment = device.environment
    environment["TASKER_ASSISTANT_KEY"] = try #require(minted["key"] as? String)
    let session = try LineProcess(.tasker, ["mcp"], environment: environment)
    try session.initializeMCP()
    for title in ["first", "second"] {
      let queued = try session.callTool("add_task", ["title": title, "notes": "queued note \(title)"])
      #expect(queued["status"] as? String == "queued")
    }
    #expect(session.finish().status == 0)
    let old = try device.vault().noteKeyring().primaryID.hex
    #expect(try device.storedKeyID("SELECT arguments FROM gate_approvals WHERE id = 1") == old)

    #expect(try device.taskkey(["rotate"]).status == 0)
    let inUse = try device.tasker(["keys", "--check", old])
    #expect(inUse.status == 17, "the queue still uses the old key before rewrap")
    #expect(inUse.stderr.contains("still seals 2 stored values"))
    let values = try device.tasker(["keys", "--values"]).stdoutText
    #expect(
      values.contains(#""record":"approval\/1\/arguments""#) || values.contains(#""record":"approval/1/arguments""#))
    let rewrap = try #require(try device.tasker(["rewrap", "--json"]).json() as? [String: Any])
    #expect(rewrap["approval_arguments_rewrapped"] as? Int == 2)
    let (_, new) = try device.rotateRewrapRetireAfterRotate(old: old)
    #expect(try device.storedKeyID("SELECT arguments FROM gate_approvals WHERE id = 1") == new)

    let approved = try device.tasker(["approvals", "approve", "1"])
    #expect(approved.status == 0, "\(approved.stderr)")
    #expect(try device.tasker(["show", "1"]).stdoutText.hasSuffix("\nqueued note first\n"))
    let denied = try device.tasker(["approvals", "deny", "2"])
    #expect(denied.status == 0, "\(denied.stderr)")
    #expect(try device.sqlite("SELECT count(*) FROM gate_approvals WHERE arguments <> ''").stdoutText == "0\n")
  }

  @Test func aCallSealedUnderAForcedRetiredKeyCanStillBeDenied() throws {
    let device = try TestDevice()
    let minted = try #require(
      try device.taskkey(["mint", "--name", "planner", "--trust", "restricted", "--grant", "tasks:write", "--json"])
        .json() as? [String: Any])
    var environment = device.environment
    environment["TASKER_ASSISTANT_KEY"] = try #require(minted["key"] as? String)
    let session = try LineProcess(.tasker, ["mcp"], environment: environment)
    try session.initializeMCP()
    _ = try session.callTool("add_task", ["title": "t", "notes": "sealed by the old key"])
    #expect(session.finish().status == 0)
    let old = try device.vault().noteKeyring().primaryID.hex
    #expect(try device.taskkey(["rotate"]).status == 0)
    #expect(try device.taskkey(["retire", old, "--force"]).status == 0)
    let approved = try device.tasker(["approvals", "approve", "1"])
    #expect(approved.status == 11)
    #expect(approved.stderr.contains("approval/1/arguments is sealed and cannot be opened"))
    let denied = try device.tasker(["approvals", "deny", "1"])
    #expect(denied.status == 0, "\(denied.stderr)")
    #expect(try device.tasker(["rewrap"]).status == 0, "a denied call leaves nothing sealed behind")
  }

  @Test func aLongAttachmentAddAcrossARetireStoresNothingAndSaysSo() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "owner"]).status == 0)
    #expect(try device.tasker(["settings", "set", "attachment-encryption", "on"]).status == 0)
    let adding = try LineProcess(
      .tasker, ["attach", "add", "--task", "1", "-", "--name", "big.bin"], environment: device.environment)
    let piece = [UInt8](repeating: 0x61, count: 1 << 20)
    try adding.write(piece)
    // The command holds its keyring once its file exists.
    let directory = device.home.directory + "/attachments"
    for _ in 0..<600 {
      if let names = try? FileManager.default.contentsOfDirectory(atPath: directory), !names.isEmpty { break }
      usleep(50_000)
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1)
    _ = try device.rotateRewrapRetire()
    try adding.write(piece)
    let (status, stderr) = adding.finish()
    #expect(status == 25, "\(stderr)")
    #expect(stderr.contains("primary note key changed"))
    #expect(stderr.contains("nothing was stored"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    #expect(try device.sqlite("SELECT count(*) FROM attachments").stdoutText == "0\n")
  }
}

extension TestDevice {
  /// The rest of the rotation after `taskkey rotate` ran: rewrap, check, retire.
  func rotateRewrapRetireAfterRotate(old: String) throws -> (old: String, new: String) {
    let check = try tasker(["keys", "--check", old])
    guard check.status == 0 else { throw SetupFailure("keys --check: \(check.stderr)") }
    let values = try tasker(["keys", "--values"]).stdoutText
    let retired = try taskkey(["retire", old, "--input", "-", "--field", "value"], input: values)
    guard retired.status == 0 else { throw SetupFailure("retire: \(retired.stderr)") }
    return (old, try vault().noteKeyring().primaryID.hex)
  }
}
