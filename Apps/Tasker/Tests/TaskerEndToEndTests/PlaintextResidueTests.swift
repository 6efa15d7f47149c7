import Foundation
import TaskerTestSupport
import Testing

@Suite("No plaintext left behind: encrypt, rewrap and body edits clear the database's log, even with tasker mcp open")
struct PlaintextResidueTests {
  /// The raw files of the database that hold `text`: `tasker.db`, `-wal`, `-shm`.
  func filesHolding(_ text: String, _ device: TestDevice) -> [String] {
    let needle = Data(text.utf8)
    return ["", "-wal", "-shm"].compactMap { suffix in
      let path = device.home.databasePath + suffix
      guard let bytes = FileManager.default.contents(atPath: path) else { return nil }
      return bytes.range(of: needle) == nil ? nil : "tasker.db" + suffix
    }
  }

  /// Starts `tasker mcp` (trusted, over stdio) and waits until it has the
  /// database and its log open; it then idles between transactions.
  func openGate(_ device: TestDevice) throws -> RunningProcess {
    let gate = try Binary.tasker.start(["mcp"], environment: device.environment)
    let fds = "/proc/\(gate.process.processIdentifier)/fd"
    for _ in 0..<500 {
      let links = (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []
      if links.contains(where: {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + $0))?
          .hasSuffix("tasker.db-wal") == true
      }) {
        return gate
      }
      usleep(10_000)
    }
    gate.kill()
    throw SetupFailure("tasker mcp did not open the database")
  }

  func run(_ device: TestDevice, _ arguments: [String], input: String = "") throws -> ProcessResult {
    let result = try device.tasker(arguments, input: input)
    #expect(result.status == 0, "tasker \(arguments): \(result.stderr)")
    #expect(!result.stderr.contains("warning"), "tasker \(arguments): \(result.stderr)")
    return result
  }

  @Test func encryptRewrapAndEditsLeaveNoEarlierTextWithAGateOpen() throws {
    let device = try TestDevice()
    _ = try run(device, ["settings", "set", "encryption", "off"])
    let canaries = (1...40).map { "CANARY-\($0)-\(UUID().uuidString)" }
    for canary in canaries[..<30] { _ = try run(device, ["add", "t", "--notes", "-"], input: canary) }
    _ = try run(device, ["page", "new", "p", "--body", "-"], input: canaries[30])
    let gate = try openGate(device)
    defer { gate.kill() }
    // The test can fail: with encryption off the canaries are in the files.
    #expect(!filesHolding(canaries[0], device).isEmpty)
    #expect(!filesHolding(canaries[30], device).isEmpty)

    let encrypted = try #require(try run(device, ["encrypt", "--batch", "7", "--json"]).json() as? [String: Any])
    #expect(encrypted["log_truncated"] as? Bool == true)
    for canary in canaries[...30] {
      #expect(filesHolding(canary, device).isEmpty, "\(canary) after encrypt")
    }

    // Rewrap: no body under the old key stays in any file.
    let old = try device.storedNotes().values.map { String($0.dropFirst(20).prefix(40)) }
    #expect(try device.taskkey(["rotate"]).status == 0)
    let rewrapped = try #require(try run(device, ["rewrap", "--batch", "5", "--json"]).json() as? [String: Any])
    #expect(rewrapped["rewrapped"] as? Int == 31)
    #expect(rewrapped["log_truncated"] as? Bool == true)
    for value in old { #expect(filesHolding(value, device).isEmpty, "\(value) after rewrap") }

    // A plain body replaced by a sealed one: the plain text is gone.
    _ = try run(device, ["settings", "set", "encryption", "off"])
    _ = try run(device, ["add", "t", "--notes", "-"], input: canaries[31])
    _ = try run(device, ["page", "new", "p", "--body", "-"], input: canaries[32])
    _ = try run(device, ["settings", "set", "encryption", "on"])
    #expect(!filesHolding(canaries[31], device).isEmpty)
    _ = try run(device, ["edit", "31", "--notes", "-"], input: "replaced")
    _ = try run(device, ["page", "edit", "2", "--body", "-"], input: "replaced")
    #expect(filesHolding(canaries[31], device).isEmpty, "after tasker edit --notes")
    #expect(filesHolding(canaries[32], device).isEmpty, "after tasker page edit --body")
    #expect(try device.tasker(["show", "31"]).stdoutText.hasSuffix("\nreplaced\n"))

    // The gate still works on the truncated log, and sees every change.
    let served = try gate.finish(stdin: Array((GateMessages.initialize + Self.showTask31).utf8))
    #expect(served.stdoutText.contains("replaced"), "\(served.stdoutText) \(served.stderr)")
  }

  static let showTask31 =
    #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"show_task","arguments":{"id":31,"include_notes":true}}}"#
    + "\n"

  @Test func aReaderHoldingASnapshotKeepsTheLogAndTheCommandSaysSo() throws {
    let device = try TestDevice()
    _ = try run(device, ["settings", "set", "encryption", "off"])
    let canary = "CANARY-\(UUID().uuidString)"
    _ = try run(device, ["add", "t", "--notes", "-"], input: canary)
    _ = try run(device, ["settings", "set", "encryption", "on"])
    // A reader in the middle of a read transaction, until its input ends.
    let ready = device.root.path("reader-ready")
    let reader = try Binary(path: Binary.which("python3")).start([
      "-c",
      """
      import sqlite3, sys
      c = sqlite3.connect(sys.argv[1], isolation_level=None)
      c.execute("BEGIN")
      c.execute("SELECT count(*) FROM tasks").fetchall()
      open(sys.argv[2], "w").close()
      sys.stdin.read()
      """,
      device.home.databasePath, ready,
    ])
    for _ in 0..<500 where !FileManager.default.fileExists(atPath: ready) { usleep(10_000) }
    #expect(FileManager.default.fileExists(atPath: ready), "the reader started")

    let edited = try device.tasker(["edit", "1", "--notes", "-"], input: "replaced")
    #expect(edited.status == 0, "the change is saved: \(edited.stderr)")
    #expect(edited.stderr.contains("tasker: warning: another process is reading the database"), "\(edited.stderr)")
    // The documented outcome: the reader's snapshot keeps the old page in the database file.
    #expect(filesHolding(canary, device) == ["tasker.db"])
    let encrypted = try #require(try device.tasker(["encrypt", "--json"]).json() as? [String: Any])
    #expect(encrypted["log_truncated"] as? Bool == false)

    _ = try reader.finish()
    // Once the reader is done, running the command again clears the log.
    _ = try run(device, ["edit", "1", "--notes", "-"], input: "replaced")
    #expect(filesHolding(canary, device).isEmpty)
  }
}
