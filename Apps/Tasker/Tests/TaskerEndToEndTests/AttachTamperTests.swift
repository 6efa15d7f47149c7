import Foundation
import TaskerTestSupport
import Testing

/// Issue 22, breaks 1, 3 and 7 for attachments: a writer of `tasker.db`
/// (the real `sqlite3` shell) changes attachment rows; tasker refuses, or
/// detects, and never acts on a column as a path.
@Suite("tasker attach: the database is data, never authority")
struct AttachTamperTests {
  func attach(_ device: TestDevice, task: Int, _ text: String) throws {
    let added = try device.tasker(["attach", "add", "--task", "\(task)", "-", "--name", "a.txt"], input: text)
    #expect(added.status == 0, "\(added.stderr)")
  }

  func sql(_ device: TestDevice, _ statement: String) throws {
    let result = try device.sqlite(statement)
    #expect(result.status == 0, "\(result.stderr)")
  }

  /// The one file in the attachments folder.
  func onlyFile(_ device: TestDevice) throws -> String {
    let directory = device.home.attachmentsDirectory
    let names = try FileManager.default.contentsOfDirectory(atPath: directory)
    try #require(names.count == 1, "\(names)")
    return directory + "/" + names[0]
  }

  /// Break 1: `file` set to a path out of `attachments/`: `delete` is
  /// refused and unlinks nothing (the vault stays), `get` prints nothing.
  @Test func aFileColumnThatIsAPathIsRefusedAndDeleteUnlinksNothing() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "t"]).status == 0)
    try attach(device, task: 1, "attached")
    let vault = device.vaultDirectory + "/vault.tkv"
    #expect(FileManager.default.fileExists(atPath: vault))
    for file in ["../../keys/vault.tkv", device.root.path("keys/vault.tkv"), "2", "../attachments/1", ""] {
      try sql(device, "UPDATE attachments SET file = '\(file)'")
      let got = try device.tasker(["attach", "get", "1"])
      #expect(got.status == 65, "\(file): \(got.stderr)")
      #expect(got.stdout.isEmpty, "\(file)")
      #expect(
        got.stderr.hasPrefix("tasker: error: attachment/1 is refused: its file column is not a name Tasker makes\n"))
      let deleted = try device.tasker(["delete", "1"])
      #expect(deleted.status == 65, "\(file): \(deleted.stderr)")
      #expect(FileManager.default.fileExists(atPath: vault), "the vault must survive \(file)")
      #expect(try device.tasker(["show", "1"]).status == 0, "the task is still there")
    }
    try sql(device, "UPDATE attachments SET file = '1'")
    #expect(try device.tasker(["attach", "get", "1"]).stdoutText == "attached")
    #expect(try device.tasker(["delete", "1"]).status == 0)
    // The delete keeps its copy (undoable) until the copies are purged.
    #expect(try device.tasker(["undo", "--purge"]).status == 0)
    #expect(try FileManager.default.contentsOfDirectory(atPath: device.home.attachmentsDirectory).isEmpty)
    #expect(FileManager.default.fileExists(atPath: vault))
  }

  /// Break 3: a sealed attachment whose `key_id` is set to NULL is an
  /// error, never the raw sealed file with exit 0.
  @Test func aSealedFileRecordedAsPlainIsAnError() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "t"]).status == 0)
    #expect(try device.tasker(["settings", "set", "attachment-encryption", "on"]).status == 0)
    try attach(device, task: 1, "sealed text")
    let size = try FileManager.default.attributesOfItem(atPath: try onlyFile(device))[.size] as? Int
    // What the writer did: the row now describes the sealed file as a plain one, size and all.
    try sql(device, "UPDATE attachments SET key_id = NULL, byte_count = \(try #require(size))")
    let got = try device.tasker(["attach", "get", "1"])
    #expect(got.status == 65, "\(got.stderr)")
    #expect(got.stdout.isEmpty)
    #expect(got.stderr.contains("attachment/1 is refused: its file is sealed but the database records it as plain"))
  }

  /// Break 3: a sealed attachment moved to another task, or two swapped
  /// (rows or files), does not open.
  @Test func aSealedAttachmentMovedOrSwappedDoesNotOpen() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "one"]).status == 0)
    #expect(try device.tasker(["add", "two"]).status == 0)
    #expect(try device.tasker(["settings", "set", "attachment-encryption", "on"]).status == 0)
    try attach(device, task: 1, "first")
    try attach(device, task: 2, "second")

    try sql(device, "UPDATE attachments SET task_id = 2 WHERE id = 1")
    let moved = try device.tasker(["attach", "get", "1"])
    #expect(moved.status == 10, "\(moved.stderr)")
    #expect(moved.stdout.isEmpty)
    #expect(moved.stderr.hasPrefix("tasker: error: attachment/1/task/2: "))
    try sql(device, "UPDATE attachments SET task_id = 1 WHERE id = 1")
    #expect(try device.tasker(["attach", "get", "1"]).stdoutText == "first")

    try sql(device, "UPDATE attachments SET file = 'x' || id; UPDATE attachments SET file = 3 - id")
    #expect(try device.tasker(["attach", "get", "1"]).status == 65)
    #expect(try device.tasker(["attach", "get", "2"]).status == 65)
    try sql(device, "UPDATE attachments SET file = 'x' || id; UPDATE attachments SET file = id")

    let directory = device.home.attachmentsDirectory
    try FileManager.default.moveItem(atPath: directory + "/1", toPath: directory + "/x")
    try FileManager.default.moveItem(atPath: directory + "/2", toPath: directory + "/1")
    try FileManager.default.moveItem(atPath: directory + "/x", toPath: directory + "/2")
    for id in ["1", "2"] {
      let swapped = try device.tasker(["attach", "get", id])
      #expect(swapped.status == 10, "\(swapped.stderr)")
      #expect(swapped.stdout.isEmpty)
    }
  }

  /// Break 3: an older sealed file put back after a rewrap keeps its key
  /// in use for `keys --check` (so retire refuses), and the next rewrap
  /// re-seals it by the key it carries.
  @Test func aFilePutBackAfterARewrapKeepsItsKeyInUse() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "t"]).status == 0)
    #expect(try device.tasker(["settings", "set", "attachment-encryption", "on"]).status == 0)
    try attach(device, task: 1, "kept across rotations")
    let stored = try onlyFile(device)
    let before = try Data(contentsOf: URL(fileURLWithPath: stored))
    let old = try device.vault().noteKeyring().primaryID.hex
    #expect(try device.taskkey(["rotate"]).status == 0)
    #expect(try device.tasker(["rewrap"]).status == 0)
    #expect(try device.tasker(["keys", "--check", old]).status == 0)

    try before.write(to: URL(fileURLWithPath: stored))
    let check = try device.tasker(["keys", "--check", old])
    #expect(check.status == 17, "the file carries the old key again: \(check.stderr)")
    let rewrap = try #require(try device.tasker(["rewrap", "--json"]).json() as? [String: Any])
    #expect(rewrap["attachments_rewrapped"] as? Int == 1)
    #expect(try device.tasker(["keys", "--check", old]).status == 0)
    #expect(try device.tasker(["attach", "get", "1"]).stdoutText == "kept across rotations")
  }

  /// Break 7: `attach get --out F` killed while writing leaves nothing
  /// under F (its content went to a temporary name beside it).
  @Test func aKilledGetOutLeavesNothingUnderTheRealName() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "t"]).status == 0)
    let source = device.root.path("large.bin")
    #expect(FileManager.default.createFile(atPath: source, contents: nil))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: source))
    try handle.truncate(atOffset: 128 << 20)
    try handle.close()
    #expect(try device.tasker(["attach", "add", "--task", "1", source]).status == 0)
    try FileManager.default.removeItem(atPath: source)

    let out = device.root.path("out.bin")
    let running = try Binary.tasker.start(["attach", "get", "1", "--out", out], environment: device.environment)
    var writing = false
    while running.process.isRunning && !writing {
      let names = (try? FileManager.default.contentsOfDirectory(atPath: device.root.path)) ?? []
      writing = names.contains { $0 == "out.bin" || $0.hasPrefix(".out.bin.tasker-") }
      if !writing { usleep(200) }
    }
    kill(running.process.processIdentifier, SIGKILL)
    let result = try running.finish()
    try #require(result.status != 0, "the copy finished before it could be killed; nothing was tested")
    #expect(!FileManager.default.fileExists(atPath: out), "a killed get must leave nothing under the real name")
    let left = try FileManager.default.contentsOfDirectory(atPath: device.root.path).filter {
      $0.hasPrefix(".out.bin.tasker-")
    }
    try #require(left.count == 1, "\(left)")
    let mode = try FileManager.default.attributesOfItem(atPath: device.root.path(left[0]))[.posixPermissions] as? Int
    #expect(mode == 0o600)
  }
}
