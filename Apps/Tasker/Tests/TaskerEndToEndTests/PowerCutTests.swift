import Foundation
import TaskerTestSupport
import Testing

/// An ext4 file system in a file, loop-mounted (root only).
final class LoopFileSystem {
  let image: String
  let mountPoint: String

  /// Makes and mounts a 128 MiB ext4 image in `directory`. `commit=600`
  /// keeps the journal from committing on its own during a test, so only
  /// what a program syncs reaches the device.
  init(in directory: TemporaryDirectory, name: String) throws {
    image = directory.path(name + ".img")
    mountPoint = directory.path(name)
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
    try Self.run("truncate", "-s", "128M", image)
    try Self.run("mkfs.ext4", "-q", "-F", image)
    try Self.run("mount", "-o", "loop,commit=600", image, mountPoint)
  }

  /// The loop device under the mount.
  func device() throws -> String {
    let found = try Binary(path: Binary.which("findmnt")).run(["-n", "-o", "SOURCE", mountPoint])
    guard found.status == 0 else { throw SetupFailure("findmnt: \(found.stderr)") }
    return found.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// Unmounts it (the loop device goes with it); again is harmless.
  func unmount() {
    _ = try? Binary(path: Binary.which("umount")).run([mountPoint])
  }

  deinit {
    unmount()
  }

  static func run(_ arguments: String...) throws {
    let result = try Binary(path: Binary.which(arguments[0])).run(Array(arguments.dropFirst()))
    guard result.status == 0 else { throw SetupFailure("\(arguments): \(result.stderr)") }
  }

  /// Root, and a loop mount works here.
  static let available: Bool = {
    guard getuid() == 0, let directory = try? TemporaryDirectory() else { return false }
    return (try? LoopFileSystem(in: directory, name: "probe")) != nil
  }()
}

@Suite("Power cut: what the gate acknowledged is on the device when the power goes")
struct PowerCutTests {
  /// Drives `tasker mcp`: three `add_task` calls, each response read, then
  /// the loop device copied with O_DIRECT (what a power cut leaves: the
  /// page cache is not on the device) while the gate still runs.
  static let driver = """
    import json, subprocess, sys
    tasker, device, copy = sys.argv[1:4]
    gate = subprocess.Popen([tasker, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    def send(message):
        gate.stdin.write(json.dumps(message) + "\\n")
        gate.stdin.flush()
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
          "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    gate.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for number in range(3):
        send({"jsonrpc": "2.0", "id": number + 2, "method": "tools/call",
              "params": {"name": "add_task", "arguments": {"title": "acknowledged %d" % number}}})
        reply = json.loads(gate.stdout.readline())
        assert not reply["result"]["isError"], reply
    subprocess.run(["dd", "if=" + device, "of=" + copy, "bs=1M", "iflag=direct", "status=none"], check=True)
    gate.kill()
    gate.wait()
    print("acknowledged 3")
    """

  @Test(.enabled(if: LoopFileSystem.available, "needs root and loop mounts"))
  func everyAcknowledgedGateAddIsOnTheDeviceAfterAPowerCut() throws {
    let device = try TestDevice()
    let disk = try LoopFileSystem(in: device.root, name: "disk")
    let after = device.root.path("after")
    // Unmounted before the directory that holds them is removed.
    defer {
      _ = try? Binary(path: Binary.which("umount")).run([after])
      disk.unmount()
      _ = device
    }
    var environment = device.environment
    environment["TASKER_HOME"] = disk.mountPoint + "/tasker"
    let copy = device.root.path("after-power-cut.img")
    let driven = try Binary(path: Binary.which("python3")).run(
      ["-c", Self.driver, Binary.tasker.path, try disk.device(), copy], environment: environment)
    #expect(driven.status == 0 && driven.stdoutText == "acknowledged 3\n", "\(driven.stdoutText) \(driven.stderr)")

    // Mounting the copy replays the file system's journal, as a reboot would.
    try FileManager.default.createDirectory(atPath: after, withIntermediateDirectories: false)
    try LoopFileSystem.run("mount", "-o", "loop", copy, after)
    let titles = try Binary(path: Binary.which("sqlite3")).run(
      ["-batch", after + "/tasker/tasker.db", "SELECT title FROM tasks ORDER BY id"])
    #expect(titles.status == 0, "\(titles.stderr)")
    #expect(titles.stdoutText == "acknowledged 0\nacknowledged 1\nacknowledged 2\n")
  }
}
