import Foundation
import TaskKeyTestSupport
import Testing

/// `taskkey attach seal|open|rewrap` through the real binary.
@Suite("taskkey attach")
struct AttachmentCommandTests {
  let home: TemporaryDirectory
  let keyPath: String

  init() throws {
    (home, keyPath) = try keyFileHome()
  }

  func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) } }

  func write(_ name: String, _ bytes: [UInt8]) throws -> String {
    let path = home.path(name)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  func read(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

  func attach(_ arguments: [String], stdin: [UInt8] = []) throws -> ProcessResult {
    try TaskKeyBinary.run(["attach"] + arguments + ["--key-file", keyPath], stdin: stdin)
  }

  @Test func sealAndOpenFileToFileAndStdinToStdout() throws {
    let message = bytes(100_000)
    let plain = try write("plain", message)
    let sealed = home.path("sealed")
    let result = try attach(["seal", plain, "-o", sealed, "--record", "attachment/7", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    #expect(report["sealed"] as? Bool == true)
    #expect(report["plaintext_bytes"] as? Int == 100_000)
    #expect(report["stored_bytes"] as? Int == (try read(sealed)).count)
    let mode = try FileManager.default.attributesOfItem(atPath: sealed)[.posixPermissions] as? Int
    #expect(mode == 0o600)

    let opened = try attach(["open", sealed, "--record", "attachment/7"])
    #expect(opened.status == 0, "\(opened.stderr)")
    #expect(opened.stdout == message)

    let piped = try attach(["seal", "--record", "r"], stdin: message)
    #expect(piped.status == 0)
    let back = try attach(["open", "-", "--record", "r"], stdin: piped.stdout)
    #expect(back.stdout == message)
    let toFile = try attach(["open", "--record", "r", "-o", home.path("from-stdin")], stdin: piped.stdout)
    #expect(toFile.status == 0, "\(toFile.stderr)")
    #expect(try read(home.path("from-stdin")) == message)
  }

  @Test func rangeReadsAcrossChunkBoundariesAndAtTheEnd() throws {
    let message = bytes(3 * 16_384 + 10)
    let sealed = home.path("sealed")
    #expect(try attach(["seal", try write("plain", message), "-o", sealed, "--record", "r"]).status == 0)
    for (offset, length) in [(16_380, 10), (0, 1), (message.count - 10, 10), (message.count, 0), (5, 49_000)] {
      let result = try attach(["open", sealed, "--record", "r", "--range", "\(offset):\(length)"])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout == Array(message[offset..<(offset + length)]))
    }
    let outside = try attach(["open", sealed, "--record", "r", "--range", "\(message.count - 1):2"])
    #expect(outside.status == 65)
    #expect(outside.stderr.contains("outside the attachment"))
    let bad = try attach(["open", sealed, "--record", "r", "--range", "12"])
    #expect(bad.status == 64)
  }

  @Test func tamperingWrongRecordAndPlainFilesGiveTheirOutcomes() throws {
    let message = bytes(40_000)
    let sealed = home.path("sealed")
    #expect(try attach(["seal", try write("plain", message), "-o", sealed, "--record", "r"]).status == 0)
    var stored = try read(sealed)
    let wrong = try attach(["open", sealed, "--record", "other", "-o", home.path("o1")])
    #expect(wrong.status == 10)
    #expect(wrong.stderr.contains("wrong record"))
    stored[stored.count - 1] ^= 1
    let flipped = try attach(["open", try write("flipped", stored), "--record", "r", "-o", home.path("o2")])
    #expect(flipped.status == 10)
    #expect(flipped.stderr.contains("final chunk (2) does not authenticate"))
    let cut = try attach([
      "open", try write("cut", Array(stored[..<(69 + 16_400)])), "--record", "r", "-o", home.path("o3"),
    ])
    #expect(cut.status == 65)
    #expect(cut.stderr.contains("final chunk (1) is missing"))
    for name in ["o1", "o2", "o3"] { #expect(!FileManager.default.fileExists(atPath: home.path(name))) }
    // A plain file passes through; the magic with a bad version is an error, never plain.
    let plain = try attach(["open", try write("text", Array("just text\n".utf8)), "--record", "r"])
    #expect(plain.status == 0)
    #expect(plain.stdoutText == "just text\n")
    var version = try read(sealed)
    version[8] = 9
    let unsupported = try attach(["open", try write("v9", version), "--record", "r"])
    #expect(unsupported.status == 12)
    #expect(unsupported.stdout.isEmpty)
  }

  @Test func rewrapMovesAnAttachmentToTheNewPrimaryKey() throws {
    let vault = try CLIVault()
    let message = bytes(50_000)
    let sealed = vault.home.path("sealed")
    let plain = vault.home.path("plain")
    try Data(message).write(to: URL(fileURLWithPath: plain))
    let made = try vault.run(["attach", "seal", plain, "-o", sealed, "--record", "attachment/1", "--json"])
    #expect(made.status == 0, "\(made.stderr)")
    let old = try #require(try JSONSerialization.jsonObject(with: Data(made.stdout)) as? [String: Any])["key_id"]
    let rotated = try vault.run(["rotate"])
    #expect(rotated.status == 0, "\(rotated.stderr)")
    let new = rotated.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    let rewrapped = try vault.run(["attach", "rewrap", sealed, "--record", "attachment/1", "--json"])
    #expect(rewrapped.status == 0, "\(rewrapped.stderr)")
    let report = try #require(try JSONSerialization.jsonObject(with: Data(rewrapped.stdout)) as? [String: Any])
    #expect(report["key_id"] as? String == new)
    #expect(report["key_id"] as? String != old as? String)
    let opened = try vault.run(["attach", "open", sealed, "--record", "attachment/1"])
    #expect(opened.stdout == message)
    let plainRewrap = try vault.run(["attach", "rewrap", plain, "--record", "attachment/1"])
    #expect(plainRewrap.status == 65)
  }

  @Test func settingIsOffByDefaultAndStoreFollowsIt() throws {
    let environment = ["TASKKEY_HOME": home.url.path]
    let shown = try TaskKeyBinary.run(["attach", "setting"], environment: environment)
    #expect(shown.stdoutText == "seal-new-attachments=off\n")
    let plain = try write("plain", bytes(1000))
    let off = try TaskKeyBinary.run(
      ["attach", "store", plain, "-o", home.path("off"), "--record", "r", "--key-file", keyPath],
      environment: environment)
    #expect(off.status == 0, "\(off.stderr)")
    #expect(try read(home.path("off")) == bytes(1000))
    #expect(try TaskKeyBinary.run(["attach", "setting", "on"], environment: environment).status == 0)
    #expect(try read(home.path("attachment-settings")) == Array("seal-new-attachments=on\n".utf8))
    let on = try TaskKeyBinary.run(
      ["attach", "store", plain, "-o", home.path("on"), "--record", "r", "--key-file", keyPath, "--json"],
      environment: environment)
    let report = try #require(try JSONSerialization.jsonObject(with: Data(on.stdout)) as? [String: Any])
    #expect(report["sealed"] as? Bool == true)
    #expect(try attach(["open", home.path("on"), "--record", "r"]).stdout == bytes(1000))
    // The file that was stored plain before still opens, unchanged.
    #expect(try attach(["open", home.path("off"), "--record", "r"]).stdout == bytes(1000))
  }

  @Test func usageErrorsExit64() throws {
    #expect(try attach(["seal"]).status == 64)  // no --record
    #expect(try attach(["frob", "--record", "r"]).status == 64)
    #expect(try attach(["seal", "--record", "r", "--json"]).status == 64)  // --json needs -o
    #expect(try attach(["open", "--record", "r", "--range", "0:1"]).status == 64)  // range needs a file
    #expect(try attach(["rewrap", "--record", "r"]).status == 64)
  }

  /// SIGKILL while sealing and while opening (input fed slowly through a
  /// pipe): no file ever appears under the output's name.
  @Test func killDuringSealOrOpenLeavesNoFileUnderTheRealName() throws {
    let message = bytes(4 << 20)
    let sealedPath = home.path("sealed")
    #expect(try attach(["seal", try write("plain", message), "-o", sealedPath, "--record", "r"]).status == 0)
    let sealed = try read(sealedPath)
    for (subcommand, input) in [("seal", message), ("open", sealed)] {
      let output = home.path("killed-\(subcommand)")
      let process = Process()
      process.executableURL = TaskKeyBinary.url
      process.arguments = ["attach", subcommand, "--record", "r", "-o", output, "--key-file", keyPath]
      let pipe = Pipe()
      process.standardInput = pipe
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      // Half the input, then wait until the temporary file has data in it.
      try pipe.fileHandleForWriting.write(contentsOf: Data(input[..<(input.count / 2)]))
      let deadline = Date().addingTimeInterval(20)
      var temporaryGrew = false
      while Date() < deadline && !temporaryGrew {
        let names = try FileManager.default.contentsOfDirectory(atPath: home.url.path)
        temporaryGrew = try names.filter { $0.hasPrefix(".killed-\(subcommand).taskkey-") }.contains {
          ((try FileManager.default.attributesOfItem(atPath: home.path($0)))[.size] as? Int ?? 0) >= 1 << 20
        }
        if !temporaryGrew { usleep(20_000) }
      }
      #expect(temporaryGrew, "\(subcommand) never wrote its temporary file")
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      try? pipe.fileHandleForWriting.close()
      #expect(process.terminationReason == .uncaughtSignal)
      #expect(!FileManager.default.fileExists(atPath: output), "\(subcommand) left a file under the real name")
    }
  }
}
