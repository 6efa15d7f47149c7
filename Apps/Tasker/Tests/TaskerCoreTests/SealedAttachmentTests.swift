import Foundation
import TaskAttachments
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

@Suite("Sealed attachments: TaskKey's attachment format, off by default")
struct SealedAttachmentTests {
  func onlyFile(_ store: TaskStore) throws -> String {
    let files = try FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory)
    #expect(files.count == 1)
    return store.attachmentsDirectory + "/" + files[0]
  }

  @Test func onMeansSealedOnDiskAndOpenedWhenRead() throws {
    let directory = try TemporaryDirectory()
    let (keyring, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    #expect(try store.attachmentEncryption() == false, "off by default")
    try store.setAttachmentEncryption(true)
    let secret = Array("top secret attachment text ".utf8) + SecureRandom.bytes(count: 2_500_000)
    let record = try store.addAttachment(
      to: .task(1), name: "scan.pdf", mediaType: "application/pdf", read: chunkedReader(secret))
    #expect(record.sealed)
    #expect(record.byteCount == Int64(secret.count))
    let stored = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try onlyFile(store))))
    #expect(Attachment.isSealed(prefix: stored))
    #expect(stored.count > secret.count)
    #expect(!String(decoding: stored.prefix(4096), as: UTF8.self).contains("top secret"))
    #expect(try store.attachmentContent(record.id) == secret)
    #expect(try store.keyUsage().keys == [KeyUsage(keyID: keyring.primaryID.hex, attachments: 1)])
  }

  @Test func contentThatLooksSealedIsSealedEvenWhenOff() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    let lookalike = Attachment.magic + Array("not really sealed".utf8)
    let record = try store.addAttachment(
      to: .task(1), name: "odd.bin", mediaType: "application/octet-stream", read: chunkedReader(lookalike))
    #expect(record.sealed, "a plain file must never pass for a sealed one")
    #expect(try store.attachmentContent(record.id) == lookalike)
  }

  @Test func aLockedVaultWritesNoFileAndNoRow() throws {
    let device = try TestDevice(unlock: false)
    let store = try device.store()
    try store.addTask(TaskDraft(title: "t"))
    // Locked, the vault cannot say whether attachments are to be sealed, so nothing is written either way.
    #expect(throws: TaskerError.vaultLocked(reason: .notUnlocked)) {
      try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader(Array("x".utf8)))
    }
    #expect(try store.attachments().isEmpty)
    let files = (try? FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory)) ?? []
    #expect(files.isEmpty, "\(files)")
  }

  @Test func anAlteredFileIsAnErrorAndReleasesNothingOfTheBadChunk() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    try store.setAttachmentEncryption(true)
    let record = try store.addAttachment(
      to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader(Array(repeating: 7, count: 1000)))
    let path = try onlyFile(store)
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    bytes[bytes.count - 20] ^= 1
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    var released = [UInt8]()
    #expect(throws: TaskerError.self) { try store.readAttachment(id: record.id) { released += $0 } }
    #expect(released.isEmpty)
    do {
      try store.readAttachment(id: record.id) { _ in }
    } catch let TaskerError.attachment(name, cause) {
      #expect(name.hasPrefix("attachment/"))
      #expect(cause.code.contains("authentication"), "\(cause)")
    }
  }

  @Test func rewrapMovesSealedFilesToThePrimaryKey() throws {
    let directory = try TemporaryDirectory()
    var keyring = try Keyring.generate()
    let old = keyring.primaryID
    let store = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    try store.addTask(TaskDraft(title: "t"))
    try store.addAttachment(
      to: .task(1), name: "plain", mediaType: "text/plain", read: chunkedReader(Array("plain".utf8)))
    try store.setAttachmentEncryption(true)
    let bytes = SecureRandom.bytes(count: 300_000)
    try store.addAttachment(to: .task(1), name: "sealed", mediaType: "text/plain", read: chunkedReader(bytes))
    try keyring.rotate()
    let rotated = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    #expect(try rotated.rewrapAttachments() == 1)
    #expect(try rotated.keyUsage().keys == [KeyUsage(keyID: keyring.primaryID.hex, attachments: 1)])
    #expect(try rotated.rewrapAttachments() == 0)
    try keyring.retire(old)
    let retired = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
    #expect(try retired.attachmentContent(2) == bytes)
    #expect(try retired.attachmentContent(1) == Array("plain".utf8))
  }
}
