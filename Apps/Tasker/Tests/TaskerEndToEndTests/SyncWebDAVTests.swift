import Foundation
import TaskerTestSupport
import Testing

/// Layer-1 sync through a real Apache mod_dav server on 127.0.0.1, end to
/// end with the real binaries: devices converge over https with the test CA
/// pinned, each with its own credential; the password stays in the vault;
/// TLS and plain-http rules; and every server fault (through
/// Fixtures/fault_proxy.py in front of the real server) has its exit code,
/// changes nothing locally and the next sync carries on without losing or
/// doubling a change.
@Suite("Sync through WebDAV (Apache mod_dav): convergence, credentials, TLS, server faults")
struct SyncWebDAVTests {
  static let users = ["alice": "pw-alice-4f1c9e", "bob": "pw-bob-77d2a0", "carol": "pw-carol-0b93e5"]

  // MARK: - a. Convergence over https with the CA pinned

  @Test func threeDevicesConvergeOverHTTPSWithTheirOwnCredentials() throws {
    let server = try WebDAVServer(users: Self.users)
    let ca = try #require(server.caFile)
    let a = try TestDevice(passphrase: "device a")
    try a.davSetUp(server.httpsURL, user: "alice", password: Self.users["alice"]!, caFile: ca, name: "a")
    let canaries = ["CANARYTITLEd4c1", "CANARYNOTE8e2f", "CANARYPAGETITLE71", "CANARYPAGEBODY3a9"]
    try a.ok(["add", "alpha \(canaries[0])", "--notes", "-"], input: "alpha \(canaries[1])")
    try a.ok(["add", "beta", "--notes", "-", "--contexts", "@home"], input: "beta note")
    try a.ok(["page", "new", canaries[2], "--body", "-"], input: "body \(canaries[3])")
    try a.ok(["sync", "now"])
    let b = try TestDevice(passphrase: "device b")
    let c = try TestDevice(passphrase: "device c")
    try b.davJoin(keysFrom: a, url: server.httpsURL, user: "bob", password: Self.users["bob"]!, caFile: ca, name: "b")
    try c.davJoin(
      keysFrom: a, url: server.httpsURL, user: "carol", password: Self.users["carol"]!, caFile: ca, name: "c")
    let devices = [a, b, c]
    try syncRounds(devices, orders: [[1, 2, 0]])
    for device in devices { #expect(try device.syncContent() == a.syncContent()) }

    try a.ok(["edit", try a.taskID("beta"), "--priority", "high"])
    try b.ok(["add", "from b", "--notes", "-"], input: "b's note \(canaries[1])")
    try c.ok(["edit", try c.taskID("alpha \(canaries[0])"), "--due", "2030-01-02"])
    try c.ok(["page", "edit", try c.pageID(canaries[2]), "--body", "-"], input: "body v2 \(canaries[3])")
    try b.ok(["done", try b.taskID("beta")])
    try syncRounds(devices, orders: [[0, 1, 2], [2, 0, 1]])

    let expected = try a.syncContent()
    for (index, device) in devices.enumerated() {
      #expect(try device.syncContent() == expected, "device \(index) differs")
      #expect(try device.taskTitles().sorted() == ["alpha \(canaries[0])", "beta", "from b"], "device \(index)")
      let alpha = try device.json(["show", try device.taskID("alpha \(canaries[0])"), "--json"])
      #expect(alpha["due"] as? String == "2030-01-02" && alpha["notes"] as? String == "alpha \(canaries[1])")
      let beta = try device.json(["show", try device.taskID("beta"), "--json"])
      #expect(beta["priority"] as? String == "high" && beta["status"] as? String == "done", "\(beta)")
      let page = try device.json(["page", "show", try device.pageID(canaries[2]), "--json"])
      #expect(page["body"] as? String == "body v2 \(canaries[3])")
    }
    // Three device folders at the storage, and nothing readable in any file.
    let files = try storageFiles(server.directory.path("root"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: server.syncRoot + "/d").count == 3)
    // A writes two objects; B and C each their first (with its box key, changes or not) and one change;
    // in the last round A and B, having applied changes and sending none, acknowledge them once each.
    #expect(files.keys.filter { $0.contains("tasker-sync/d/") && files[$0]! != nil }.count == 8)
    for (name, bytes) in files {
      for canary in canaries {
        #expect(!name.contains(canary) && !(bytes ?? []).containsBytes(Array(canary.utf8)), "\(canary) in \(name)")
      }
    }
  }

  // MARK: - b. The password stays in the vault

  @Test func thePasswordIsNeverInArgvTheDatabaseOrOutput() throws {
    let server = try WebDAVServer(users: Self.users)
    let password = Self.users["alice"]!
    let a = try TestDevice(passphrase: "device a")
    try a.ok(["add", "one", "--notes", "-"], input: "a note")
    var outputs: [String] = []
    let arguments = [
      "sync", "setup", server.httpsURL, "--user", "alice", "--password-file", try a.passwordFile(password),
      "--ca-file", try #require(server.caFile), "--name", "a", "--json",
    ]
    #expect(!arguments.joined(separator: " ").contains(password))
    let setup = try a.ok(arguments)
    outputs.append(setup.stdoutText + setup.stderr)
    for command in [["sync", "now"], ["sync", "now", "--json"], ["sync", "status"], ["sync", "devices", "--json"]] {
      let result = try a.ok(command)
      outputs.append(result.stdoutText + result.stderr)
    }
    let status = try a.json(["sync", "status", "--json"])
    outputs.append(try a.ok(["sync", "status", "--json"]).stdoutText)
    #expect(status["kind"] as? String == "webdav", "\(status)")
    #expect((status["target"] as? String)?.hasPrefix(server.httpsURL) == true, "\(status)")
    // A refused credential's message does not echo it either.
    try server.setPassword(user: "alice", password: "changed-on-the-server")
    let refused = try a.tasker(["sync", "now"])
    #expect(refused.status == 54, "\(refused.stderr)")
    outputs.append(refused.stdoutText + refused.stderr)
    for output in outputs { #expect(!output.contains(password), "\(output)") }

    // Not in the database or its journal, nor in clear anywhere in the vault.
    let home = try FileManager.default.contentsOfDirectory(atPath: a.home.directory)
    let databases = home.filter { $0.hasPrefix("tasker.db") }
    #expect(!databases.isEmpty)
    for name in databases {
      let bytes = try fileBytes(a.home.directory + "/" + name)
      #expect(!bytes.containsBytes(Array(password.utf8)), "the password is in \(name)")
    }
    for (name, bytes) in try storageFiles(a.vaultDirectory) {
      #expect(!(bytes ?? []).containsBytes(Array(password.utf8)), "the password is in clear in the vault: \(name)")
    }
  }

  // MARK: - c. TLS and plain http

  @Test func tlsIsVerifiedAndPlainHTTPIsOnlyForLoopback() throws {
    let server = try WebDAVServer(users: Self.users)
    let a = try TestDevice(passphrase: "device a")
    try a.ok(["add", "one"])
    let passwordFile = try a.passwordFile(Self.users["alice"]!)
    let vaultBefore = try storageFiles(a.vaultDirectory)
    let listBefore = try a.ok(["list", "--all", "--json"]).stdoutText

    // The system's store does not know the test CA.
    let untrusted = try a.tasker([
      "sync", "setup", server.httpsURL, "--user", "alice", "--password-file", passwordFile, "--name", "a",
    ])
    #expect(untrusted.status == 69, "\(untrusted.stderr)")
    #expect(untrusted.stderr.lowercased().contains("tls"), "\(untrusted.stderr)")
    #expect(try a.tasker(["sync", "status"]).status == 62)
    #expect(try storageFiles(a.vaultDirectory) == vaultBefore, "no vault item written")
    #expect(try a.ok(["list", "--all", "--json"]).stdoutText == listBefore)
    #expect(try storageFiles(server.storageRoot).isEmpty, "nothing written at the server")

    // Plain http needs --allow-http.
    let plain = try a.tasker(["sync", "setup", server.url, "--user", "alice", "--password-file", passwordFile])
    #expect(plain.status == 64, "\(plain.stderr)")
    // Even with --allow-http, never off loopback: refused before connecting.
    for host in ["192.0.2.1", "192.168.1.1", "10.1.2.3"] {
      let started = Date()
      let remote = try a.run(
        [
          "sync", "setup", "http://\(host):\(server.port)/dav", "--user", "alice", "--password-file", passwordFile,
          "--allow-http", "--name", "a",
        ], environment: ["TASKER_SYNC_TIMEOUT": "30"])
      #expect(remote.status != 0 && remote.status != 69, "\(host): \(remote.status) \(remote.stderr)")
      #expect(remote.stderr.contains("refused before connecting"), "\(host): \(remote.stderr)")
      #expect(Date().timeIntervalSince(started) < 5, "no connection attempted to \(host)")
    }
    #expect(try a.tasker(["sync", "status"]).status == 62)
    #expect(try storageFiles(a.vaultDirectory) == vaultBefore)
    #expect(try storageFiles(server.storageRoot).isEmpty)

    // Loopback http with --allow-http works.
    try a.davSetUp(server.url, user: "alice", password: Self.users["alice"]!, allowHTTP: true, name: "a")
    try a.ok(["sync", "now"])
    #expect(try a.json(["sync", "status", "--json"])["kind"] as? String == "webdav")
  }

  // MARK: - d. A wrong password

  @Test func aRejectedPasswordChangesNothingAndTheNextSyncCarriesOn() throws {
    let server = try WebDAVServer(users: Self.users)
    let ca = try #require(server.caFile)
    let a = try TestDevice(passphrase: "device a")
    try a.davSetUp(server.httpsURL, user: "alice", password: Self.users["alice"]!, caFile: ca, name: "a")
    try a.ok(["add", "first", "--notes", "-"], input: "first note")
    try a.ok(["sync", "now"])
    let b = try TestDevice(passphrase: "device b")
    try b.davJoin(keysFrom: a, url: server.httpsURL, user: "bob", password: Self.users["bob"]!, caFile: ca, name: "b")
    try b.ok(["add", "from b"])
    try b.ok(["sync", "now"])
    try a.ok(["add", "local on a"])

    try server.setPassword(user: "alice", password: "revoked-\(UUID().uuidString)")
    let before = try a.snapshot()
    let storageBefore = try storageFiles(server.storageRoot)
    let refused = try a.tasker(["sync", "now"])
    #expect(refused.status == 54, "\(refused.stderr)")
    #expect(refused.stderr.contains("401") || refused.stderr.contains("403"), "\(refused.stderr)")
    #expect(try a.snapshot() == before, "the local database is unchanged")
    #expect(try storageFiles(server.storageRoot) == storageBefore, "nothing written")

    try server.setPassword(user: "alice", password: Self.users["alice"]!)
    try a.ok(["sync", "now"])
    try b.ok(["sync", "now"])
    for device in [a, b] { #expect(try device.taskTitles().sorted() == ["first", "from b", "local on a"]) }
  }

  // MARK: - e. Server faults through the proxy

  @Test func everyServerFaultHasItsCodeAndTheNextSyncLosesNothing() throws {
    let server = try WebDAVServer(users: Self.users, tls: false)
    let proxy = try FaultProxy(upstreamPort: server.port)
    let a = try TestDevice(passphrase: "device a")
    try a.davSetUp(
      proxy.url(server.collection), user: "alice", password: Self.users["alice"]!, allowHTTP: true, name: "a")
    try a.ok(["add", "start", "--notes", "-"], input: "start note")
    try a.ok(["sync", "now"])
    let b = try TestDevice(passphrase: "device b")
    try b.davJoin(keysFrom: a, url: server.url, user: "bob", password: Self.users["bob"]!, allowHTTP: true, name: "b")
    let quick = ["TASKER_SYNC_TIMEOUT": "3"]
    var titles = ["start"]

    let faults: [(mode: String, code: Int32)] = [
      ("status:500", 69), ("status:507", 55), ("status:507 PUT", 55), ("status:401", 54), ("status:403 PUT", 54),
      ("stall", 69), ("stall PUT", 69), ("close", 69), ("close PUT", 69), ("lose PUT", 69), ("status:502", 69),
    ]
    for (index, fault) in faults.enumerated() {
      try a.ok(["add", "on a \(index)", "--notes", "-"], input: "note a \(index)")
      try a.ok(["edit", try a.taskID("start"), "--notes", "-"], input: "start note \(index)")
      try b.ok(["add", "on b \(index)"])
      try b.ok(["sync", "now"])
      titles += ["on a \(index)", "on b \(index)"]
      let tasksBefore = try a.taskRows()
      try proxy.set(fault.mode)
      let started = Date()
      let failed = try a.run(["sync", "now"], environment: quick)
      let elapsed = Date().timeIntervalSince(started)
      #expect(failed.status == fault.code, "\(fault.mode): \(failed.status) \(failed.stderr)")
      #expect(elapsed < 10, "\(fault.mode): \(elapsed) s")
      if !fault.mode.hasSuffix(" PUT") {
        // Nothing was read: the tasks are as they were.
        #expect(try a.taskRows() == tasksBefore, "\(fault.mode): the local database is unchanged")
      }
      try proxy.set("pass")
      let next = try a.run(["sync", "now"], environment: quick)
      #expect(next.status == 0, "after \(fault.mode): \(next.stderr)")
      try b.ok(["sync", "now"])
      for device in [a, b] {
        #expect(try device.taskTitles().sorted() == titles.sorted(), "after \(fault.mode): each change once")
      }
      #expect(try b.json(["show", try b.taskID("start"), "--json"])["notes"] as? String == "start note \(index)")
      #expect(try b.json(["show", try b.taskID("on a \(index)"), "--json"])["notes"] as? String == "note a \(index)")
    }
    #expect(try a.syncContent() == b.syncContent())
    #expect(proxy.log().contains { $0.hasPrefix("lose PUT ") && $0.hasSuffix(" 201") }, "the lost PUT was stored")
    #expect((try a.json(["conflicts", "--json"])["conflicts"] as? [Any])?.isEmpty == true, "no conflict made")

    // Nothing listening on the port.
    proxy.stop()
    try a.ok(["add", "while down"])
    let down = try a.run(["sync", "now"], environment: quick)
    #expect(down.status == 69, "\(down.stderr)")
    server.stop()
    let downToo = try b.run(["sync", "now"], environment: quick)
    #expect(downToo.status == 69, "\(downToo.stderr)")
  }

  // MARK: - f. This device's next position already taken

  @Test func anObjectAtThisDevicesNextPositionIsNeverOverwritten() throws {
    let server = try WebDAVServer(users: Self.users, tls: false)
    let proxy = try FaultProxy(upstreamPort: server.port)
    let a = try TestDevice(passphrase: "device a")
    try a.davSetUp(
      proxy.url(server.collection), user: "alice", password: Self.users["alice"]!, allowHTTP: true, name: "a")
    try a.ok(["add", "first"])
    try a.ok(["sync", "now"])
    let b = try TestDevice(passphrase: "device b")
    try b.davJoin(keysFrom: a, url: server.url, user: "bob", password: Self.users["bob"]!, allowHTTP: true, name: "b")
    try b.ok(["add", "from b"])
    try b.ok(["sync", "now"])
    let aID = try a.syncDeviceID()
    let bID = try b.syncDeviceID()
    // B's first object, put by the storage at A's next position.
    let taken = server.syncRoot + "/d/\(aID)/" + seqName(2)
    #expect(!FileManager.default.fileExists(atPath: taken))
    let foreign = try fileBytes(server.syncRoot + "/d/\(bID)/" + seqName(1))
    try Data(foreign).write(to: URL(fileURLWithPath: taken))
    try a.ok(["add", "second"])
    let refused = try a.tasker(["sync", "now"])
    #expect(refused.status == 61, "\(refused.stderr)")
    #expect(refused.stderr.contains("already holds object 2"), "\(refused.stderr)")
    #expect(try fileBytes(taken) == foreign, "the existing object is not overwritten")
    let path = "/\(server.collection)/tasker-sync/d/\(aID)/\(seqName(2))"
    #expect(proxy.log().contains("pass PUT \(path) 412"), "\(proxy.log())")
    #expect(try a.tasker(["sync", "now"]).status == 61, "refused again, never replaced")
    #expect(try fileBytes(taken) == foreign)
  }
}

// MARK: - The fault proxy

/// Fixtures/fault_proxy.py on 127.0.0.1 in front of the server's plain
/// port; its mode is a file it reads on every request. Stopped when released.
private final class FaultProxy {
  let port: Int
  let directory: TemporaryDirectory
  private let process = Process()
  private let input = Pipe()

  init(upstreamPort: Int) throws {
    directory = try TemporaryDirectory()
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fixtures/fault_proxy.py").path
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: Binary.which("python3"))
    process.arguments = [script, String(upstreamPort), directory.path("mode")]
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    var line: [UInt8] = []
    while line.last != UInt8(ascii: "\n") {
      guard let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty else { break }
      line += byte
    }
    let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
      process.terminate()
      throw SetupFailure("fault_proxy.py did not start: \(text)")
    }
    self.port = port
  }

  func url(_ collection: String) -> String { "http://127.0.0.1:\(port)/\(collection)" }

  func set(_ mode: String) throws {
    try mode.write(toFile: directory.path("mode"), atomically: true, encoding: .utf8)
  }

  /// Every request seen: "<mode> <METHOD> <path>[ <upstream status>]".
  func log() -> [String] {
    ((try? String(contentsOfFile: directory.path("mode.log"), encoding: .utf8)) ?? "").split(separator: "\n")
      .map(String.init)
  }

  func stop() {
    guard process.isRunning else { return }
    try? input.fileHandleForWriting.close()
    process.terminate()
    process.waitUntilExit()
  }

  deinit { stop() }
}

// MARK: - Helpers

extension TestDevice {
  /// Runs tasker with more environment (TASKER_SYNC_TIMEOUT).
  fileprivate func run(_ arguments: [String], environment more: [String: String]) throws -> ProcessResult {
    try Binary.tasker.run(arguments, environment: environment.merging(more) { $1 })
  }

  /// A 0600 file in this device's directory holding `password` and a newline.
  func passwordFile(_ password: String) throws -> String {
    let path = root.path("webdav-password-\(UUID().uuidString)")
    guard
      FileManager.default.createFile(
        atPath: path, contents: Data((password + "\n").utf8), attributes: [.posixPermissions: 0o600])
    else { throw SetupFailure("cannot write the password file") }
    return path
  }

  func davSetUp(
    _ url: String, user: String, password: String, caFile: String? = nil, allowHTTP: Bool = false, name: String
  ) throws {
    var arguments = ["sync", "setup", url, "--user", user, "--password-file", try passwordFile(password)]
    if let caFile { arguments += ["--ca-file", caFile] }
    if allowHTTP { arguments.append("--allow-http") }
    try ok(arguments + ["--name", name])
  }

  /// Imports `source`'s keys through a sync bundle, sets up with its own
  /// credential, syncs.
  func davJoin(
    keysFrom source: TestDevice, url: String, user: String, password: String, caFile: String? = nil,
    allowHTTP: Bool = false, name: String
  ) throws {
    try importKeys(from: source)
    try davSetUp(url, user: user, password: password, caFile: caFile, allowHTTP: allowHTTP, name: name)
    try ok(["sync", "now"])
  }

  /// The tasks and pages rows, dumped by the sqlite3 shell.
  fileprivate func taskRows() throws -> String {
    let rows = try sqlite("SELECT * FROM tasks ORDER BY id; SELECT * FROM pages ORDER BY id;")
    #expect(rows.status == 0, "\(rows.stderr)")
    return rows.stdoutText
  }

  /// The listing, the task and page rows and the sync tables.
  fileprivate func snapshot() throws -> String {
    let rows = try sqlite(
      "SELECT kind, uid, local_id, state FROM sync_records ORDER BY kind, uid; SELECT * FROM sync_devices; "
        + "SELECT seq, hex(object) FROM sync_outbox ORDER BY seq;")
    #expect(rows.status == 0, "\(rows.stderr)")
    return try ok(["list", "--all", "--json"]).stdoutText + taskRows() + rows.stdoutText
  }
}
