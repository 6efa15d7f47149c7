import Foundation
import TaskerTestSupport
import Testing

@Suite("Two devices: a sync bundle carries the keys, a copied database opens on the other device")
struct TwoDeviceTests {
  @Test func deviceBJoinsThroughASyncBundleAndShowsEveryNote() throws {
    let deviceA = try TestDevice(passphrase: "laptop passphrase")
    for index in 1...5 {
      #expect(try deviceA.tasker(["add", "task \(index)", "--notes", "-"], input: "note \(index) from A").status == 0)
    }
    #expect(try deviceA.tasker(["page", "new", "Journal", "--body", "-"], input: "page from A").status == 0)
    let bundle = deviceA.root.path("keys.tksync")
    let exported = try deviceA.taskkey(["sync", "export", "--out", bundle, "--passphrase-file", deviceA.passphraseFile])
    #expect(exported.status == 0, "\(exported.stderr)")

    // Device B has its own vault; it imports A's keys with A's passphrase.
    let deviceB = try TestDevice(passphrase: "desktop passphrase")
    let imported = try deviceB.taskkey(["sync", "import", bundle, "--passphrase-file", deviceA.passphraseFile])
    #expect(imported.status == 0, "\(imported.stderr)")
    try copyDatabase(from: deviceA, to: deviceB)

    for index in 1...5 {
      let shown = try deviceB.tasker(["show", "\(index)", "--json"])
      #expect(shown.status == 0, "\(shown.stderr)")
      let task = try #require(try shown.json() as? [String: Any])
      #expect(task["notes"] as? String == "note \(index) from A")
    }
    #expect(try deviceB.tasker(["page", "show", "1"]).stdoutText.hasSuffix("\npage from A\n"))

    // A device that never received the keys sees titles, and an error for every sealed body.
    let deviceC = try TestDevice(passphrase: "stranger")
    try copyDatabase(from: deviceA, to: deviceC)
    #expect(try deviceC.tasker(["list"]).stdoutText.split(separator: "\n").count == 5)
    for arguments in [["show", "1"], ["show", "1", "--json"], ["page", "show", "1"]] {
      let refused = try deviceC.tasker(arguments)
      #expect(refused.status == 11, "\(arguments): \(refused.stderr)")
      #expect(refused.stdout.isEmpty, "never ciphertext as text")
      #expect(refused.stderr.contains("cannot be opened on this device: "))
      #expect(
        refused.stderr.contains("hint: this device lacks the key: import a sync bundle with 'taskkey sync import'"))
    }
  }

  /// Copies the database file alone, as a file-sync service would (every
  /// Tasker process has exited, so the write-ahead log is folded in).
  func copyDatabase(from source: TestDevice, to target: TestDevice) throws {
    #expect(!FileManager.default.fileExists(atPath: source.home.databasePath + "-wal"))
    // Private, as tasker makes it: tasker refuses a home open to others.
    try FileManager.default.createDirectory(
      atPath: target.home.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    try FileManager.default.copyItem(atPath: source.home.databasePath, toPath: target.home.databasePath)
  }
}
