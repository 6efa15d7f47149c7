import Foundation
import TaskCrypto
import TaskVault
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// The protection settings live in the vault, never in the database
/// (issue 22, break 3: a database writer turned sealing off silently).
@Suite struct ProtectionSettingsTests {
  static let vectors = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors/protection-settings-v1.json")

  @Test func theVectors() throws {
    let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.vectors)) as? [String: Any])
    let tests = try #require(file["tests"] as? [[String: Any]])
    #expect(tests.count >= 20)
    var outcomes: Set<String> = []
    for test in tests {
      let comment = Comment(rawValue: test["comment"] as? String ?? "")
      let bytes = try #require(Self.bytes(hex: test["record_hex"] as? String ?? "x"), comment)
      let database = try #require(test["database"] as? String)
      let expected = try #require(test["result"] as? String)
      outcomes.insert(expected)
      do {
        let settings = try ProtectionRecord.decode(bytes, database: database)
        #expect(expected == "success", comment)
        #expect(settings.bodyEncryption == test["body_encryption"] as? Bool, comment)
        #expect(settings.attachmentEncryption == test["attachment_encryption"] as? Bool, comment)
        #expect(ProtectionRecord.encode(settings, database: database) == bytes, "a valid record re-encodes to itself")
      } catch {
        #expect(error.rawValue == expected, comment)
      }
    }
    #expect(outcomes == ["success", "malformed", "unsupported_version", "wrong_database"])
    let names = try #require(file["item_names"] as? [[String: String]])
    #expect(!names.isEmpty)
    for name in names {
      #expect(ProtectionRecord.itemName(forDatabase: name["database"] ?? "") == name["item_name"])
    }
  }

  /// The reproduction of break 3: a settings row written into the
  /// database no longer turns sealing off.
  @Test func aDatabaseWriterCannotTurnSealingOff() throws {
    let device = try TestDevice()
    let store = try device.store()
    try store.connection.execute(
      "INSERT INTO settings VALUES ('body-encryption', 'off'), ('attachment-encryption', 'off')")
    #expect(try store.bodyEncryption())
    let task = try store.addTask(TaskDraft(title: "t", notes: "the canary note"))
    let stored = try #require(try store.connection.prepare("SELECT notes FROM tasks").first { $0.text(0) })
    #expect(SealedValue.isSealed(stored))
    #expect(try store.task(id: task.id).notes == "the canary note")
  }

  @Test func theUsersChoiceIsKeptInTheVaultForThisDatabaseOnly() throws {
    let device = try TestDevice()
    try device.store().setBodyEncryption(false)
    try device.store().setAttachmentEncryption(true)
    let reopened = try device.store()
    #expect(try reopened.protectionSettings() == ProtectionSettings(bodyEncryption: false, attachmentEncryption: true))
    try reopened.connection.execute("DELETE FROM settings")
    #expect(try reopened.bodyEncryption() == false, "the database's rows are not read")
    let item = try device.vault().item(
      named: ProtectionRecord.itemName(forDatabase: try reopened.canonicalDatabasePath()))
    #expect(item.attributes.itemClass == .afterFirstUnlockThisDeviceOnly)

    // Another database under the same vault has the defaults.
    let other = try TaskStore(
      databasePath: device.root.path("other.db"), keys: VaultKeySource(directory: device.vaultDirectory))
    #expect(try other.protectionSettings() == .defaults)
    // The database named another way has the same record.
    let linked = try TaskStore(
      databasePath: device.root.path("tasker/../tasker/./tasker.db"),
      keys: VaultKeySource(directory: device.vaultDirectory))
    #expect(try linked.bodyEncryption() == false)
  }

  @Test func aLockedVaultLeavesTheSettingsUnknownAndNothingIsWritten() throws {
    let device = try TestDevice()
    try device.store().setBodyEncryption(false)
    try device.vault().lock()
    let store = try device.store()
    #expect(throws: TaskerError.vaultLocked(reason: .notUnlocked)) { try store.protectionSettings() }
    #expect(throws: TaskerError.vaultLocked(reason: .notUnlocked)) {
      try store.addTask(TaskDraft(title: "t", notes: "would be plain"))
    }
    #expect(throws: TaskerError.vaultLocked(reason: .notUnlocked)) { try store.setAttachmentEncryption(true) }
    try store.addTask(TaskDraft(title: "a task without notes needs no setting"))
    #expect(try store.connection.prepare("SELECT count(*) FROM tasks").first { $0.integer(0) } == 1)
  }

  @Test func aDamagedOrMovedRecordIsRefusedAndRecordingAgainStartsFromOn() throws {
    let device = try TestDevice()
    let store = try device.store()
    let path = try store.canonicalDatabasePath()
    let name = ProtectionRecord.itemName(forDatabase: path)
    func put(_ text: String) throws {
      try device.vault().setItem(
        try Array(text.utf8).withUnsafeBytes { try SecureBytes(copying: $0) }, named: name,
        class: .afterFirstUnlockThisDeviceOnly)
    }
    try put("tasker-protection 1\nbody-encryption off\nattachment-encryption off\ndatabase /elsewhere/tasker.db\n")
    #expect(throws: TaskerError.protectionSettingsUnreadable(item: name, problem: .wrongDatabase)) {
      try store.addTask(TaskDraft(title: "t", notes: "x"))
    }
    try put("tasker-protection 1\nbody-encryption OFF\n")
    #expect(throws: TaskerError.protectionSettingsUnreadable(item: name, problem: .malformed)) {
      try store.bodyEncryption()
    }
    let now = try store.changeProtection { $0.bodyEncryption = false }
    #expect(now == ProtectionSettings(bodyEncryption: false, attachmentEncryption: true), "the other setting is on")
    #expect(try store.protectionSettings() == now)
  }

  @Test func aStoreOnABareKeyringKeepsItsSettingsForItsLifeAndReadsNoRow() throws {
    let directory = try TemporaryDirectory()
    let (keyring, store) = try directory.newStore()
    try store.connection.execute("INSERT INTO settings VALUES ('body-encryption', 'off')")
    #expect(try store.bodyEncryption())
    try store.setBodyEncryption(false)
    try store.addTask(TaskDraft(title: "t", notes: "plain by choice"))
    #expect(try store.connection.prepare("SELECT notes FROM tasks").first { $0.text(0) } == "plain by choice")
    let again = try TaskStore(databasePath: store.databasePath, keys: keyring)
    #expect(try again.bodyEncryption(), "a new store starts from the defaults")
  }

  static func bytes(hex: String) -> [UInt8]? {
    let digits = Array(hex.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes = [UInt8]()
    for index in stride(from: 0, to: digits.count, by: 2) {
      guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
      bytes.append(byte)
    }
    return bytes
  }
}
