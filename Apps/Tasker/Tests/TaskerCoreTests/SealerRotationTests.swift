import Foundation
import TaskCrypto
import TaskVault
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// One long-lived store (as the gate holds it) across `taskkey rotate`:
/// every value it seals afterwards is under the new primary key, the keys
/// it held are read again only when the vault's revision changed, and a
/// body rewrap moved still opens.
@Suite("The sealer confirms the primary key inside each write")
struct SealerRotationTests {
  let device: TestDevice
  let store: TaskStore

  init() throws {
    device = try TestDevice()
    store = try device.store()
  }

  func keyID(_ stored: String) throws -> String {
    try #require(try SealedValue.keyID(of: stored)).hex
  }

  static func draft(_ title: String, notes: String = "") -> TaskDraft {
    var draft = TaskDraft(title: title)
    draft.notes = notes
    return draft
  }

  func stored(_ sql: String) throws -> String {
    try #require(try store.connection.prepare(sql).first { $0.text(0) })
  }

  @Test func everyKindOfWriteSealsUnderTheNewPrimaryAfterARotation() throws {
    try store.addTask(Self.draft("before", notes: "read the keys"))
    let approval = try store.enqueueApproval(
      keyID: GateReceiptTableTests.key, assistant: "a", tool: .addTask, arguments: "{\"title\":\"x\"}", reason: .risky,
      summary: "")
    try store.setBodyEncryption(false)
    try store.addTask(Self.draft("plain", notes: "sealed by encrypt"))
    try store.setBodyEncryption(true)
    let old = try device.vault().noteKeyring().primaryID.hex
    try device.vault().updateNoteKeyring { _ = try $0.rotate() }
    let new = try device.vault().noteKeyring().primaryID.hex

    try store.addTask(Self.draft("after", notes: "added"))
    try store.addTasks([Self.draft("a", notes: "imported"), Self.draft("b", notes: "imported too")])
    var changes = TaskChanges()
    changes.notes = "edited"
    try store.editTask(id: 1, changes)
    let page = try store.addPage(title: "p", body: "page body")
    _ = try store.enqueueApproval(
      keyID: GateReceiptTableTests.key, assistant: "a", tool: .addTask, arguments: "{\"title\":\"y\"}", reason: .risky,
      summary: "")
    try store.encryptBodies()
    for id in 1...5 {
      #expect(try keyID(try stored("SELECT notes FROM tasks WHERE id = \(id)")) == new, "task \(id)")
    }
    #expect(try keyID(try stored("SELECT body FROM pages WHERE id = \(page.id)")) == new)
    #expect(try keyID(try stored("SELECT arguments FROM gate_approvals WHERE id = \(approval.id + 1)")) == new)
    #expect(try keyID(try stored("SELECT arguments FROM gate_approvals WHERE id = \(approval.id)")) == old)
    #expect(try store.rewrapApprovalArguments() == 1)
    #expect(try store.keyUsage().keys.map(\.keyID) == [new])
  }

  @Test func aBodyRewrappedByAnotherProcessOpensInTheLongLivedStore() throws {
    try store.addTask(Self.draft("t", notes: "moved by rewrap"))
    let old = try device.vault().noteKeyring().primaryID
    try device.vault().updateNoteKeyring { _ = try $0.rotate() }
    try device.store().rewrapBodies()
    try device.vault().updateNoteKeyring { try $0.retire(old) }
    #expect(try store.task(id: 1).notes == "moved by rewrap")
  }

  @Test func anAttachmentSealedBeforeARotationIsNotStored() throws {
    try store.addTask(Self.draft("owner"))
    try store.setAttachmentEncryption(true)
    var pieces = [Array("first piece".utf8), Array("second piece".utf8)]
    do {
      try store.addAttachment(to: .task(1), name: "a.txt", mediaType: "text/plain") {
        if pieces.count == 1 { try device.vault().updateNoteKeyring { _ = try $0.rotate() } }
        return pieces.isEmpty ? [] : pieces.removeFirst()
      }
      Issue.record("an attachment sealed under the replaced key was stored")
    } catch TaskerError.noteKeyChanged(let record, _, _) {
      #expect(record.hasPrefix("attachment/"))
    }
    #expect(try store.attachments().isEmpty)
    #expect(try FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory).isEmpty)
    let added = try store.addAttachment(to: .task(1), name: "a.txt", mediaType: "text/plain") { [] }
    #expect(added.sealed)
  }

  @Test func aSourceWithoutARevisionIsReadAgainAtEveryCheck() throws {
    final class Counting: NoteKeySource {
      var reads = 0
      let keyring: Keyring
      init() throws { keyring = try Keyring.generate() }
      func noteKeyring() throws -> Keyring {
        reads += 1
        return keyring
      }
    }
    let source = try Counting()
    let directory = try TemporaryDirectory()
    let plain = try TaskStore(databasePath: directory.path("t.db"), keys: source)
    try plain.addTask(Self.draft("one", notes: "n"))
    try plain.addTask(Self.draft("two", notes: "n"))
    #expect(source.reads >= 3, "no revision: the check reads the keyring again")
    #expect(try plain.task(id: 2).notes == "n")
  }
}
