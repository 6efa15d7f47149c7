import BackupRules
import Foundation
import TaskCrypto
import TaskKeyTestSupport
import TaskVault
import Testing

/// Walks `BackupRules.table` and checks each row against what the code
/// does: it makes every kind of thing, then a TaskKey backup, a sync
/// bundle and a GNU tar `--exclude-caches` archive of the data directory,
/// and looks for each thing in each.
@Suite("The backup table matches the code")
struct BackupTableTests {
  @Test func everyRowOfTheTableHoldsForBackupSyncBundleAndSystemBackup() throws {
    let vault = try FullVault()
    let directory = vault.directory
    // Leftovers of an interrupted write, as a crash would leave them: an
    // older generation of each file beside the current one.
    let older = [
      "vault.tkv": try fileBytes(directory + "/vault.tkv"),
      "device-only/device.tkv": try fileBytes(directory + "/device-only/device.tkv"),
    ]
    try FullVault.check(vault.cli.run(["item", "set", "later/sync"], text: "x"))
    try FullVault.check(vault.cli.run(["item", "set", "later/device", "--device-only"], text: "y"))
    for (from, to) in [
      ("vault.tkv", "vault.tkv.prev"), ("vault.tkv", "vault.tkv.tmp"),
      ("device-only/device.tkv", "device-only/device.tkv.prev"),
    ] {
      #expect(FileManager.default.createFile(atPath: directory + "/" + to, contents: Data(older[from]!)))
    }
    let backupPath = vault.home.path("b.tkbackup")
    try FullVault.check(vault.cli.run(["backup", "create", "--out", backupPath]))
    let backup = try fileBytes(backupPath)
    let bundleResult = try vault.cli.run(
      ["sync", "export", "--out", vault.home.path("s.tksync"), "--passphrase-file", vault.cli.passphraseFile])
    try FullVault.check(bundleResult)
    let bundle = try fileBytes(vault.home.path("s.tksync"))
    let passphrase = secret("correct horse battery")
    let bundleContents = try VaultFileReader.openSyncBundle(bundle, passphrase: passphrase)
    let backupContents = try BackupRules.inspect(backup, passphrase: passphrase)
    let archive = vault.home.path("system.tar")
    try runTool(["tar", "--exclude-caches", "-cf", archive, "-C", vault.home.url.path, "keys"])
    let listing = Set(try runTool(["tar", "-tf", archive]).output.split(separator: "\n").map(String.init))
    let vaultFile = try fileBytes(directory + "/vault.tkv")

    #expect(Set(BackupRules.table.map(\.thing)) == Set(KeptThing.allCases), "one row per kind of thing")
    for rule in BackupRules.table {
      let name = rule.thing.rawValue
      switch rule.thing {
      case .noteKeyring:
        #expect(backupContents.noteKeyCount == 1 && contains(backup, vaultFile), "\(name)")
        #expect(bundleContents.noteKeyring.keys.count == 1, "\(name)")
      case .synchronisableItems:
        #expect(backupContents.itemNames.contains("calendar/token") == rule.inTaskKeyBackup, "\(name)")
        #expect(
          bundleContents.items.contains { $0.attributes.name == "calendar/token" } == rule.inSyncBundle, "\(name)")
      case .deviceOnlyItems, .assistantRegistryKey:
        let item = rule.thing == .deviceOnlyItems ? "provider/openai" : AssistantKeyItem.name
        #expect(backupContents.itemNames.contains(item) == rule.inTaskKeyBackup, "\(name)")
        #expect(bundleContents.items.contains { $0.attributes.name == item } == rule.inSyncBundle, "\(name)")
      case .sessionKey:
        #expect(rule.location?.hasPrefix("/dev/shm/") == true, "outside the data directory")
        #expect(!listing.contains { $0.hasSuffix(".key") }, "\(name)")
        continue
      case .attachmentFiles:
        #expect(rule.location == nil)
        #expect(!allFiles(under: directory).contains { $0.0.contains("attach") }, "TaskKey keeps no attachment files")
        continue
      default:
        break
      }
      guard let location = rule.location else { continue }
      let bytes = try fileBytes(directory + "/" + location)
      // In the TaskKey backup: its bytes are there exactly when the table says so.
      if !bytes.isEmpty && rule.thing != .noteKeyring && rule.thing != .synchronisableItems {
        #expect(contains(backup, bytes) == rule.inTaskKeyBackup, "\(name) in the backup")
        #expect(contains(bundle, bytes) == rule.inSyncBundle, "\(name) in the sync bundle")
      }
      // In the system backup: the file is in the archive exactly when the table says so.
      #expect(listing.contains("keys/" + location) == rule.inSystemBackup, "\(name) in the tar archive")
    }
  }
}

/// The registry integrity key's item name, without importing AssistantKeys here.
enum AssistantKeyItem {
  static let name = "assistant-keys/registry-integrity-key"
}
