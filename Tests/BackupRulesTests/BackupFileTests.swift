import BackupRules
import Foundation
import TaskCrypto
import TaskKeyTestSupport
import TaskSystem
import TaskVault
import Testing

/// The backup file through the library API: every MUST-reject rule.
@Suite("Backup file: every bad input is a distinct error")
struct BackupFileTests {
  let home: TemporaryDirectory
  let vault: Vault
  let good: [UInt8]

  init() throws {
    home = try TemporaryDirectory()
    vault = try Vault.create(at: home.path("keys"), passphrase: secret("pw"), preset: .fastTestOnly)
    try vault.unlock(passphrase: secret("pw"))
    try vault.setItem(secret("sync"), named: "s", class: .afterFirstUnlock)
    try vault.setItem(secret("DEVICE-ONLY-VALUE"), named: "d", class: .afterFirstUnlockThisDeviceOnly)
    try BackupRules.backup(vault, to: home.path("b.tkbackup"))
    good = try fileBytes(home.path("b.tkbackup"))
    try vault.lock()
  }

  func outcome(_ bytes: [UInt8], _ passphrase: String = "pw") -> BackupError? {
    do {
      _ = try BackupRules.inspect(bytes, passphrase: secret(passphrase), path: "b")
      return nil
    } catch let error as BackupError {
      return error
    } catch {
      return .system(.failed(call: "\(error)", path: "", errno: 0))
    }
  }

  @Test func aGoodBackupHoldsTheSynchronisableItemsOnly() throws {
    let summary = try BackupRules.inspect(good, passphrase: secret("pw"))
    #expect(summary.itemNames == ["s"])
    #expect(summary.noteKeyCount == 1)
    #expect(!contains(good, Array("DEVICE-ONLY-VALUE".utf8)))
    #expect(!contains(good, Array("sync".utf8)), "items are sealed")
    #expect(Array(good[0..<10]) == Array("TKBACKUP".utf8) + [0, 1])
  }

  @Test func eachBadInputGivesItsOwnError() throws {
    #expect(outcome(good, "wrong") == .vault(.wrongPassphrase))
    var magic = good
    magic[0] ^= 1
    #expect(outcome(magic) == .damaged(path: "b", reason: "not a TaskKey backup (bad magic)"))
    var version = good
    version[9] = 2
    #expect(outcome(version) == .unsupportedVersion(path: "b", version: 2))
    if case .damaged = outcome(Array(good.dropLast())) {} else { Issue.record("truncated") }
    var generation = good
    generation[33] ^= 1
    if case .damaged = outcome(generation) {} else { Issue.record("generation") }
    var created = good
    created[40] ^= 1
    #expect(outcome(created) == .tampered(path: "b", part: "backup tag"))
    var tag = good
    tag[tag.count - 1] ^= 1
    #expect(outcome(tag) == .tampered(path: "b", part: "backup tag"))
    var inner = good
    inner[46 + 400] ^= 1  // inside the sealed store; the vault file's checksum catches it first
    if case .vault(.damaged(path: "b (vault file)", _)) = outcome(inner) {} else { Issue.record("inner checksum") }
  }

  @Test func everyHeaderByteIsAuthenticated() throws {
    for index in 0..<46 {
      var bytes = good
      bytes[index] ^= 0x40
      #expect(outcome(bytes) != nil, "header byte \(index) flipped was accepted")
    }
  }

  @Test func aLockedVaultCannotBeBackedUp() throws {
    #expect(throws: BackupError.vault(.locked(reason: .notUnlocked))) {
      try BackupRules.backup(vault, to: home.path("c.tkbackup"))
    }
  }

  @Test func theRestoreReportSaysWhatIsAbsent() throws {
    let report = try BackupRules.restore(
      from: home.path("b.tkbackup"), into: home.path("restored"), passphrase: secret("pw"))
    #expect(report.deviceOnlyItemsAbsent && report.everyAssistantNeedsANewKey)
    #expect(report.lines.contains { $0.contains("every assistant needs a new key") })
    let restored = try Vault(at: home.path("restored"))
    #expect(try restored.status().deviceOnlyGeneration == nil)
    #expect(try restored.exclusionMarkerState().missing.isEmpty)
  }
}
