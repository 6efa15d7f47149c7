import Foundation
import TaskerTestSupport
import Testing

/// What one `strace -y` line shows: the call, the path of its first
/// descriptor, and the whole line.
struct TracedCall {
  let name: String
  let path: String
  let line: String

  /// Parses `PID name(FD<path>, …` (as `strace -f -y` writes it); nil for
  /// signals, exits and resumed calls.
  init?(_ line: String) {
    // The PID is padded to the width of the largest: one space or more.
    let words = line.split(separator: " ", maxSplits: 1)
    guard words.count == 2 else { return nil }
    let call = words[1].drop { $0 == " " }
    guard let open = call.firstIndex(of: "("), let start = call.firstIndex(of: "<"),
      let end = call[start...].firstIndex(of: ">"), open < start
    else { return nil }
    name = String(call[..<open])
    path = String(call[call.index(after: start)..<end])
    self.line = line
  }

  var syncsLog: Bool { (name == "fsync" || name == "fdatasync") && path.hasSuffix("tasker.db-wal") }
  var writesLog: Bool { name.hasPrefix("pwrite") && path.hasSuffix("tasker.db-wal") }
  var writesStandardOutput: Bool { name.hasPrefix("write") && line.contains("(1<") }
}

@Suite("Durability: every acknowledged change is synced to the disk before it is acknowledged")
struct DurabilityTests {
  /// Runs `tasker` (or `tasker mcp` when `arguments` is ["mcp"]) under
  /// `strace -y`, tracing writes and syncs.
  func trace(_ device: TestDevice, _ arguments: [String], input: String = "") throws -> [TracedCall] {
    let log = device.root.path("trace-\(UUID().uuidString).txt")
    let result = try Binary(path: Binary.which("strace")).run(
      ["-f", "-qq", "-y", "-s", "96", "-e", "trace=write,writev,pwrite64,fsync,fdatasync", "-o", log, "--"]
        + [Binary.tasker.path] + arguments,
      stdin: Array(input.utf8), environment: device.environment)
    #expect(result.status == 0, "tasker \(arguments): \(result.stderr)")
    return try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { TracedCall(String($0)) }
  }

  /// Checks that the log was written and then synced after its last write
  /// and before the first write to standard output that `isAcknowledgment`
  /// picks: the commit was on the disk before anything said it was done.
  func expectSyncedBefore(
    _ calls: [TracedCall], _ what: String, isAcknowledgment: (TracedCall) -> Bool
  ) {
    guard let ack = calls.firstIndex(where: { $0.writesStandardOutput && isAcknowledgment($0) }) else {
      Issue.record("\(what): no acknowledgment written: \(calls.map(\.line))")
      return
    }
    guard let lastWrite = calls[..<ack].lastIndex(where: \.writesLog) else {
      Issue.record("\(what): the log was not written before the acknowledgment")
      return
    }
    let synced = calls[lastWrite..<ack].contains { $0.syncsLog }
    #expect(
      synced,
      "\(what): tasker.db-wal was not synced between its last write and the acknowledgment: \(calls[lastWrite...ack].map(\.line))"
    )
  }

  // As root (CI, where `make strace` installs strace) the test runs and fails without strace; elsewhere it may skip.
  @Test(.enabled(if: Sandbox.canTrace || getuid() == 0, "strace is missing or ptrace is not permitted here"))
  func everyCLIChangeIsSyncedBeforeItIsAcknowledged() throws {
    try #require(Sandbox.canTrace, "strace cannot trace here: run 'make strace'")
    let device = try TestDevice()
    let steps: [(arguments: [String], input: String, acknowledgment: String)] = [
      (["add", "Call the bank", "--notes", "-"], "account 1234", "Added task 1"),
      (["add", "Water the plants"], "", "Added task 2"),
      (["edit", "1", "--priority", "high"], "", "Changed task 1"),
      (["edit", "1", "--notes", "-"], "account 5678", "Changed task 1"),
      (["done", "2"], "", "Completed task 2"),
      (["delete", "2"], "", "Deleted task 2"),
      (["page", "new", "Journal", "--body", "-"], "today", "Added page 1"),
      (["page", "edit", "1", "--body", "-"], "tomorrow", "Changed page 1"),
    ]
    for step in steps {
      let calls = try trace(device, step.arguments, input: step.input)
      expectSyncedBefore(calls, "tasker \(step.arguments)") { $0.line.contains(step.acknowledgment) }
    }
    #expect(try device.tasker(["show", "1"]).stdoutText.hasSuffix("\naccount 5678\n"))
  }

  @Test(.enabled(if: Sandbox.canTrace || getuid() == 0, "strace is missing or ptrace is not permitted here"))
  func aGateAddTaskIsSyncedBeforeItsResponse() throws {
    try #require(Sandbox.canTrace, "strace cannot trace here: run 'make strace'")
    let device = try TestDevice()
    // Made first, so the gate's own start (migration) is not what is traced.
    #expect(try device.tasker(["add", "first"]).status == 0)
    let calls = try trace(device, ["mcp"], input: GateMessages.addTask(title: "Pay rent", notes: "from the gate"))
    expectSyncedBefore(calls, "add_task") { $0.line.contains(#"\"id\":2,"#) }
    let listed = try device.tasker(["list", "--json"]).stdoutText
    #expect(listed.contains("Pay rent"), "\(listed)")
  }
}

/// JSON-RPC lines for `tasker mcp` over stdio.
enum GateMessages {
  static let initialize =
    #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#
    + "\n" + #"{"jsonrpc":"2.0","method":"notifications/initialized"}"# + "\n"

  /// Initialises, then calls `add_task` with id 2.
  static func addTask(title: String, notes: String) -> String {
    initialize
      + #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_task","arguments":{"title":""#
      + title + #"","notes":""# + notes + #""}}}"# + "\n"
  }
}
