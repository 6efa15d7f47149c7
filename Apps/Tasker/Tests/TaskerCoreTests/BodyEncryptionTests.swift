import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

@Suite("Encrypt and rewrap: plain bodies are sealed once, sealed ones move to the primary key")
struct BodyEncryptionTests {
  /// A store with encryption off and `count` tasks and pages holding plain bodies.
  func plainStore(_ directory: TemporaryDirectory, keyring: Keyring, count: Int) throws -> TaskStore {
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    try store.setBodyEncryption(false)
    for index in 1...count {
      let draft = TaskDraft(title: "task \(index)", notes: index % 5 == 0 ? "" : "note \(index)")
      try store.addTask(draft)
      try store.addPage(title: "page \(index)", body: "body \(index)")
    }
    return store
  }

  func storedBodies(_ store: TaskStore) throws -> [String] {
    try store.connection.prepare("SELECT notes FROM tasks ORDER BY id").rows { $0.text(0) }
      + store.connection.prepare("SELECT body FROM pages ORDER BY id").rows { $0.text(0) }
  }

  @Test func encryptSealsEveryPlainBodyInBatchesAndASecondRunChangesNothing() throws {
    let directory = try TemporaryDirectory()
    let keyring = try Keyring.generate()
    let store = try plainStore(directory, keyring: keyring, count: 25)
    var seen = [EncryptionReport]()
    let report = try store.encryptBodies(batchSize: 7) { seen.append($0) }
    #expect(report.sealed == 20 + 25)
    #expect(report.empty == 5)
    #expect(report.alreadySealed == 0)
    #expect(report.batches == 4 + 4)
    #expect(seen.count == report.batches)
    #expect(try store.bodyEncryption())
    let stored = try storedBodies(store)
    #expect(stored.filter { !$0.isEmpty }.allSatisfy { $0.hasPrefix("tc1.\(keyring.primaryID.hex):") })
    for index in 1...25 {
      #expect(try store.task(id: Int64(index)).notes == (index % 5 == 0 ? "" : "note \(index)"))
      #expect(try store.page(id: Int64(index)).body == "body \(index)")
    }
    let again = try store.encryptBodies(batchSize: 7)
    #expect(again.sealed == 0)
    #expect(again.alreadySealed == 45)
    #expect(try storedBodies(store) == stored)
  }

  @Test func aBatchThatFailsIsRolledBackWhole() throws {
    let directory = try TemporaryDirectory()
    let keyring = try Keyring.generate()
    let store = try plainStore(directory, keyring: keyring, count: 3)
    // A body over the sealed-value limit cannot be sealed: its batch (all three tasks) stays plain.
    try store.connection.prepare("UPDATE tasks SET notes = ? WHERE id = 3")
      .run([.text(String(repeating: "x", count: SealedValue.maximumPlaintextByteCount + 1))])
    #expect(throws: TaskerError.self) { try store.encryptBodies(batchSize: 10) }
    let notes = try store.connection.prepare("SELECT notes FROM tasks WHERE id < 3 ORDER BY id").rows { $0.text(0) }
    #expect(notes == ["note 1", "note 2"])
  }

  @Test func encryptRefusesAnOutOfRangeBatchAndALockedVaultBeforeWriting() throws {
    let device = try TestDevice()
    let store = try device.store()
    try store.setBodyEncryption(false)
    let draft = TaskDraft(title: "t", notes: "plain")
    try store.addTask(draft)
    try device.vault().lock()
    #expect(throws: TaskerError.invalidValue(field: "batch size", reason: "must be 1 to 100000")) {
      try store.encryptBodies(batchSize: 0)
    }
    #expect(throws: TaskerError.vaultLocked(reason: .notUnlocked)) { try store.encryptBodies() }
    try device.vault().unlock(passphrase: device.secret())
    #expect(try store.bodyEncryption() == false, "a refused run leaves the setting alone")
    #expect(try storedBodies(store) == ["plain"])
  }

  @Test func rewrapMovesEverySealedBodyToThePrimaryKey() throws {
    let directory = try TemporaryDirectory()
    var keyring = try Keyring.generate()
    let old = keyring.primaryID
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    for index in 1...4 {
      let draft = TaskDraft(title: "t\(index)", notes: "note \(index)")
      try store.addTask(draft)
    }
    try store.addPage(title: "p", body: "page body")
    try store.setBodyEncryption(false)
    let plain = TaskDraft(title: "plain", notes: "left plain")
    try store.addTask(plain)
    #expect(try store.keyUsage().keys == [KeyUsage(keyID: old.hex, taskNotes: 4, pageBodies: 1)])

    try keyring.rotate()
    let rotated = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    let report = try rotated.rewrapBodies()
    #expect(
      report
        == RewrapReport(
          rewrapped: 5, current: 0, plain: 1, primaryKeyID: keyring.primaryID.hex, batches: 2, logTruncated: true))
    let usage = try rotated.keyUsage()
    #expect(usage.keys == [KeyUsage(keyID: keyring.primaryID.hex, taskNotes: 4, pageBodies: 1)])
    #expect(usage.plainBodies == 1)
    #expect(try rotated.task(id: 3).notes == "note 3")
    #expect(try rotated.task(id: 5).notes == "left plain")
    #expect(try rotated.rewrapBodies().rewrapped == 0)

    // Once the old key is retired nothing needs it.
    try keyring.retire(old)
    #expect(try TaskStore(databasePath: directory.path("t.db"), keys: keyring).page(id: 1).body == "page body")
  }

  @Test func aBatchEndsAtFourMiBOfBodiesWhateverTheRowLimit() throws {
    let directory = try TemporaryDirectory()
    let keyring = try Keyring.generate()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    try store.setBodyEncryption(false)
    // 1.5 MiB each: three fill a batch (4.5 MiB ≥ 4 MiB), so ten take four.
    for index in 1...10 {
      try store.addTask(TaskDraft(title: "t", notes: "\(index) " + String(repeating: "x", count: 3 << 19)))
    }
    let report = try store.encryptBodies(batchSize: 5000)
    #expect(report.sealed == 10)
    #expect(report.batches == 4)
    #expect(report.logTruncated)
    var keyring2 = keyring
    try keyring2.rotate()
    let rotated = try TaskStore(databasePath: directory.path("t.db"), keys: keyring2)
    let rewrap = try rotated.rewrapBodies()
    #expect(rewrap.rewrapped == 10)
    #expect(rewrap.batches == 5, "sealed bodies are larger: two per batch")
    #expect(try rotated.task(id: 7).notes.hasPrefix("7 xxx"))
  }

  @Test func rowsWithNegativeIdsAreSealedAndRewrappedToo() throws {
    let directory = try TemporaryDirectory()
    var keyring = try Keyring.generate()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    try store.setBodyEncryption(false)
    try store.connection.prepare("INSERT INTO tasks (id, title, notes, created_at) VALUES (-7, 't', 'below zero', 0)")
      .run()
    try store.addTask(TaskDraft(title: "t", notes: "above"))
    #expect(try store.encryptBodies(batchSize: 1).sealed == 2)
    try keyring.rotate()
    let rotated = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    #expect(try rotated.rewrapBodies().rewrapped == 2)
    #expect(try rotated.task(id: -7).notes == "below zero")
  }

  @Test func rewrapStopsAtABodyThatDoesNotOpenAndARunAfterFinishesTheRest() throws {
    let directory = try TemporaryDirectory()
    var keyring = try Keyring.generate()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    for index in 1...6 { try store.addTask(TaskDraft(title: "t\(index)", notes: "note \(index)")) }
    let stranger = try SealedValue.seal("x", using: try Keyring.generate(), context: "task/5/notes")
    try store.connection.prepare("UPDATE tasks SET notes = ? WHERE id = 5").run([.text(stranger)])
    try keyring.rotate()
    let rotated = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    var committed = [RewrapReport]()
    #expect(throws: TaskerError.self) { try rotated.rewrapBodies(batchSize: 2) { committed.append($0) } }
    #expect(committed.map(\.rewrapped) == [2, 4], "tasks 1-4 in two batches, then the batch of 5 and 6 rolled back")
    let primary = "tc1.\(keyring.primaryID.hex):"
    #expect(try storedBodies(rotated).map { $0.hasPrefix(primary) } == [true, true, true, true, false, false])
    // The user removes the note that cannot open; a second run finishes.
    try store.connection.prepare("UPDATE tasks SET notes = '' WHERE id = 5").run()
    let finished = try rotated.rewrapBodies(batchSize: 2)
    #expect(finished.rewrapped == 1)
    #expect(finished.current == 4)
    #expect(try rotated.task(id: 6).notes == "note 6")
  }

  @Test func rewrapChangesNothingWhenOneBodyOfTheBatchDoesNotOpen() throws {
    let directory = try TemporaryDirectory()
    var keyring = try Keyring.generate()
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    for index in 1...3 {
      let draft = TaskDraft(title: "t\(index)", notes: "note \(index)")
      try store.addTask(draft)
    }
    // Task 3's notes are sealed by a key this keyring never had.
    let stranger = try SealedValue.seal("x", using: try Keyring.generate(), context: "task/3/notes")
    try store.connection.prepare("UPDATE tasks SET notes = ? WHERE id = 3").run([.text(stranger)])
    let before = try storedBodies(store)
    try keyring.rotate()
    let rotated = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    #expect(
      throws: TaskerError.sealedBodyUnreadable(
        record: "task/3/notes", cause: .unknownKeyID(try SealedValue.keyID(of: stranger)!))
    ) {
      try rotated.rewrapBodies()
    }
    #expect(try storedBodies(rotated) == before)
  }

  @Test func sealedRecordsListEverySealedBodyWithItsContext() throws {
    let directory = try TemporaryDirectory()
    let (keyring, store) = try directory.newStore()
    let draft = TaskDraft(title: "t", notes: "n")
    try store.addTask(draft)
    try store.addTask(TaskDraft(title: "empty"))
    try store.addPage(title: "p", body: "b")
    var records = [SealedRecord]()
    try store.sealedRecords { records.append($0) }
    #expect(records.map(\.record) == ["task/1/notes", "page/1/body"])
    #expect(try records.allSatisfy { try SealedValue.open($0.value, using: keyring, context: $0.record).count == 1 })
    // A value of an unknown format version is counted, never guessed at.
    try store.connection.prepare("UPDATE tasks SET notes = 'tc2.0a0b0c0d:AAAA' WHERE id = 2").run()
    #expect(try store.keyUsage().unreadable == 1)
  }
}
