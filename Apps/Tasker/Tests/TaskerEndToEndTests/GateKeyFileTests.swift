import Foundation
import TaskerTestSupport
import Testing

/// `tasker mcp` over stdio takes the assistant key from the file
/// `TASKER_ASSISTANT_KEY_FILE` names (0600, the user's), and refuses a
/// loose, missing or doubled source before anything is opened (issue 23).
@Suite struct GateKeyFileTests {
  /// Mints a standard key with task grants and writes it to `key` in the
  /// device's root with `mode`.
  private func keyFile(_ device: TestDevice, mode: Int) throws -> (path: String, key: String) {
    let minted = try #require(
      try device.taskkey(["mint", "--name", "planner", "--trust", "standard", "--grant", "tasks:write", "--json"])
        .json() as? [String: Any])
    let key = try #require(minted["key"] as? String)
    let path = device.root.path("key")
    #expect(
      FileManager.default.createFile(
        atPath: path, contents: Data((key + "\n").utf8), attributes: [.posixPermissions: mode]))
    return (path, key)
  }

  @Test func theGateRunsAsTheAssistantWhoseKeyTheFileHolds() throws {
    let device = try TestDevice()
    let (path, _) = try keyFile(device, mode: 0o600)
    var environment = device.environment
    environment["TASKER_ASSISTANT_KEY_FILE"] = path
    let session = try LineProcess(.tasker, ["mcp"], environment: environment)
    try session.initializeMCP()
    let added = try session.callTool("add_task", ["title": "from the key file"])
    #expect((added["task"] as? [String: Any])?["id"] as? Int == 1, "\(added)")
    #expect(session.finish().status == 0)
    let receipts = try #require(try device.tasker(["receipts", "--json"]).json() as? [String: Any])
    let newest = try #require((receipts["receipts"] as? [[String: Any]])?.first)
    #expect(newest["assistant"] as? String == "planner", "the call ran as the key's assistant, not trusted")
    #expect(newest["actor"] as? String == "assistant")
  }

  @Test func aKeyFileOthersCanReadIsRefusedBeforeAnythingIsOpened() throws {
    let device = try TestDevice()
    let (path, key) = try keyFile(device, mode: 0o644)
    var environment = device.environment
    environment["TASKER_ASSISTANT_KEY_FILE"] = path
    let refused = try Binary.tasker.run(["mcp"], stdin: [], environment: environment)
    #expect(refused.status == 77, "\(refused.stderr)")
    #expect(refused.stderr.contains("TASKER_ASSISTANT_KEY_FILE"))
    #expect(refused.stderr.contains("chmod 600"))
    #expect(!refused.stderr.contains(key), "the key never reaches an error")
    #expect(!FileManager.default.fileExists(atPath: device.home.databasePath), "nothing was created")
  }

  @Test func aMissingKeyFileIsRefusedNotTrusted() throws {
    let device = try TestDevice()
    var environment = device.environment
    environment["TASKER_ASSISTANT_KEY_FILE"] = device.root.path("absent")
    let refused = try Binary.tasker.run(["mcp"], stdin: [], environment: environment)
    #expect(refused.status == 66, "\(refused.stderr)")
    #expect(refused.stderr.contains("does not exist"))
    #expect(refused.stdoutText.isEmpty, "no trusted session was served")
    #expect(!FileManager.default.fileExists(atPath: device.home.databasePath))
  }

  @Test func aKeyFileWithMoreThanOneLineIsRefused() throws {
    let device = try TestDevice()
    let (path, key) = try keyFile(device, mode: 0o600)
    try Data((key + "\nsecond line\n").utf8).write(to: URL(fileURLWithPath: path))
    var environment = device.environment
    environment["TASKER_ASSISTANT_KEY_FILE"] = path
    let refused = try Binary.tasker.run(["mcp"], stdin: [], environment: environment)
    #expect(refused.status == 77, "\(refused.stderr)")
    #expect(refused.stderr.contains("the key alone, on one line"))
  }

  @Test func bothSourcesSetIsRefusedSayingWhichToDrop() throws {
    let device = try TestDevice()
    let (path, key) = try keyFile(device, mode: 0o600)
    var environment = device.environment
    environment["TASKER_ASSISTANT_KEY_FILE"] = path
    environment["TASKER_ASSISTANT_KEY"] = key
    let refused = try Binary.tasker.run(["mcp"], stdin: [], environment: environment)
    #expect(refused.status == 64, "\(refused.stderr)")
    #expect(refused.stderr.contains("unset TASKER_ASSISTANT_KEY and keep the key in the file"))
    #expect(!FileManager.default.fileExists(atPath: device.home.databasePath))
  }

  @Test func helpAndTheManualNameTheKeyFileVariable() throws {
    let help = try Binary.tasker.run(["--help"])
    #expect(help.stdoutText.contains("TASKER_ASSISTANT_KEY_FILE"), "\(help.stdoutText)")
    let mcpHelp = try Binary.tasker.run(["mcp", "--help"])
    #expect(mcpHelp.stdoutText.contains("TASKER_ASSISTANT_KEY_FILE"))
    #expect(mcpHelp.stdoutText.contains("never for an assistant or LLM host"))
    let manual = try Binary.tasker.run(["completion", "man"])
    #expect(manual.stdoutText.contains(".B TASKER_ASSISTANT_KEY_FILE"))
  }
}
