import Foundation
import TaskerTestSupport
import Testing

@Suite("tasker attach: plain by default, sealed when on, streamed")
struct AttachCommandTests {
  func write(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
  }

  func storedFiles(_ device: TestDevice) throws -> [String] {
    let directory = device.home.attachmentsDirectory
    return try FileManager.default.contentsOfDirectory(atPath: directory).map { directory + "/" + $0 }
  }

  @Test func plainThenSealedRoundTripsAndTheDiskHoldsNoPlaintext() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "Taxes"]).status == 0)
    let source = device.root.path("receipt.txt")
    let text = Array("receipt: 42 EUR, card ending 9876\n".utf8)
    try write(text, to: source)
    let plain = try device.tasker(["attach", "add", "--task", "1", source, "--json"])
    #expect(plain.status == 0, "\(plain.stderr)")
    let plainRecord = try #require(try plain.json() as? [String: Any])
    #expect(plainRecord["sealed"] as? Bool == false)
    #expect(plainRecord["media_type"] as? String == "text/plain")

    #expect(try device.tasker(["settings", "set", "attachment-encryption", "on"]).status == 0)
    let sealed = try device.tasker(
      ["attach", "add", "--task", "1", "-", "--name", "stdin.txt"], input: "card 9876 from stdin")
    #expect(sealed.status == 0, "\(sealed.stderr)")
    #expect(sealed.stdoutText == "Attached 2: stdin.txt (20 bytes, sealed)\n")

    let files = try storedFiles(device)
    let contents = try files.map { String(decoding: try Data(contentsOf: URL(fileURLWithPath: $0)), as: UTF8.self) }
    #expect(contents.filter { $0.contains("9876") }.count == 1, "only the plain one holds plaintext")
    #expect(try device.tasker(["attach", "get", "1"]).stdout == text)
    #expect(try device.tasker(["attach", "get", "2"]).stdoutText == "card 9876 from stdin")
    let out = device.root.path("copy.txt")
    #expect(try device.tasker(["attach", "get", "2", "--out", out]).status == 0)
    #expect(try String(contentsOfFile: out, encoding: .utf8) == "card 9876 from stdin")
    let list = try device.tasker(["attach", "list", "--task", "1"]).stdoutText
    #expect(list.contains("1\ttask/1\treceipt.txt\t34 bytes\ttext/plain\n"))
    #expect(list.contains("2\ttask/1\tstdin.txt\t20 bytes\ttext/plain\tsealed\n"))

    // Locked: the plain file still streams, the sealed one is a clear error.
    #expect(try device.taskkey(["lock"]).status == 0)
    #expect(try device.tasker(["attach", "get", "1"]).stdout == text)
    let locked = try device.tasker(["attach", "get", "2"])
    #expect(locked.status == 14)
    #expect(locked.stdout.isEmpty)
  }

  /// How often `arguments` on `device` opens `tasker.db`: read-only, and
  /// for writing (strace).
  func databaseOpens(_ device: TestDevice, _ arguments: [String]) throws -> [Int] {
    let log = device.root.path("opens-\(UUID().uuidString).txt")
    let result = try Binary(path: Binary.which("strace")).run(
      ["-f", "-qq", "-e", "trace=openat", "-o", log, "--", Binary.tasker.path] + arguments,
      environment: device.environment)
    #expect(result.status == 0, "\(arguments): \(result.stderr)")
    let opens = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
      .filter { $0.contains("/tasker.db\"") && !$0.contains("= -1") }
    return [opens.filter { $0.contains("O_RDONLY") }.count, opens.filter { $0.contains("O_RDWR") }.count]
  }

  @Test(.enabled(if: Sandbox.canTrace, "strace is missing or ptrace is not permitted here"))
  func getOpensTheDatabaseOnceReadOnlyAndForWritingOnlyToFetch() throws {
    let folder = try TemporaryDirectory()
    let a = try TestDevice(passphrase: "device a")
    try a.syncSetUp(folder.path, name: "a")
    try a.ok(["add", "report"])
    let id = try a.attach("the report", named: "report.txt", toTask: "report")
    try a.ok(["sync", "now"])
    #expect(try databaseOpens(a, ["attach", "get", id]) == [1, 0])
    let b = try TestDevice(passphrase: "device b")
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    let listed = try b.json(["attach", "list", "--json"])["attachments"] as? [[String: Any]]
    let remote = try #require(listed?.first?["id"] as? String)
    #expect(try databaseOpens(b, ["attach", "get", remote]) == [1, 1], "the fetch writes through a store of its own")
    #expect(try databaseOpens(b, ["attach", "get", remote]) == [1, 0], "fetched, it is read as any other")
  }

  @Test func anAlteredSealedFileFailsAndLeavesNoOutputFile() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "t"]).status == 0)
    #expect(try device.tasker(["settings", "set", "attachment-encryption", "on"]).status == 0)
    let source = device.root.path("big.bin")
    try write([UInt8](repeating: 0x5a, count: 3 << 20), to: source)
    #expect(try device.tasker(["attach", "add", "--task", "1", source]).status == 0)
    let stored = try #require(try storedFiles(device).first)
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: stored)))
    bytes[bytes.count - 100] ^= 0x01
    try write(bytes, to: stored)
    let out = device.root.path("restored.bin")
    let failed = try device.tasker(["attach", "get", "1", "--out", out])
    #expect(failed.status == 10, "\(failed.stderr)")
    #expect(failed.stderr.hasPrefix("tasker: error: attachment/"))
    #expect(!FileManager.default.fileExists(atPath: out), "no partial plaintext is left behind")
  }

  @Test func getStreamsSoMemoryDoesNotGrowWithTheFile() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "t"]).status == 0)
    #expect(try device.tasker(["settings", "set", "attachment-encryption", "on"]).status == 0)
    let source = device.root.path("large.bin")
    #expect(FileManager.default.createFile(atPath: source, contents: nil))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: source))
    try handle.truncate(atOffset: 192 << 20)
    try handle.close()
    #expect(try device.tasker(["attach", "add", "--task", "1", source]).status == 0)
    let running = try Binary.tasker.start(
      ["attach", "get", "1", "--out", device.root.path("out.bin")], environment: device.environment)
    var peakKiB = 0
    while running.process.isRunning {
      if let status = try? String(contentsOfFile: "/proc/\(running.process.processIdentifier)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kib = Int(line.split(separator: " ")[1])
      {
        peakKiB = max(peakKiB, kib)
      }
      usleep(1000)
    }
    let result = try running.finish()
    #expect(result.status == 0, "\(result.stderr)")
    let size = try FileManager.default.attributesOfItem(atPath: device.root.path("out.bin"))[.size] as? Int
    #expect(size == 192 << 20)
    #expect(peakKiB > 0 && peakKiB < 96 * 1024, "peak resident \(peakKiB) KiB for a 192 MiB attachment")
  }
}
