import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

@Suite("Attachments: files beside the database, streamed in and out")
struct AttachmentTests {
  @Test func addListGetAndDeleteWithTheTask() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    try store.addPage(title: "p", body: "")
    let bytes = SecureRandom.bytes(count: 3 * TaskerFiles.chunkByteCount + 17)
    let record = try store.addAttachment(
      to: .task(1), name: "scan.pdf", mediaType: "application/pdf", read: chunkedReader(bytes, size: 65536))
    #expect(
      record
        == AttachmentRecord(
          id: 1, taskID: 1, pageID: nil, name: "scan.pdf", byteCount: Int64(bytes.count), mediaType: "application/pdf",
          sealed: false, remote: false))
    try store.addAttachment(to: .page(1), name: "empty", mediaType: "text/plain", read: chunkedReader([], size: 1))
    #expect(try store.attachments().map(\.name) == ["scan.pdf", "empty"])
    #expect(try store.attachments(of: .page(1)).map(\.id) == [2])
    #expect(try store.attachmentContent(1) == bytes)
    #expect(try store.attachmentContent(2) == [])

    let files = try FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory)
    #expect(files.count == 2)
    #expect(files.sorted() == ["1", "2"], "files are named by the attachment's id, never by the user's name")
    let mode = try FileManager.default.attributesOfItem(atPath: store.attachmentsDirectory)[.posixPermissions] as? Int
    #expect(mode == 0o700)

    try store.deleteTask(id: 1)
    #expect(try store.attachments().map(\.id) == [2])
    #expect(try FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory).count == 1)
  }

  @Test func aFileThatChangedSizeIsAnError() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    try store.addAttachment(
      to: .task(1), name: "a", mediaType: "text/plain", read: chunkedReader(Array("hello".utf8), size: 2))
    let file = try #require(try FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory).first)
    let path = store.attachmentsDirectory + "/" + file
    try Data("hell".utf8).write(to: URL(fileURLWithPath: path))
    #expect(throws: TaskerError.fileAccess(path: path, reason: "the file holds fewer bytes than recorded")) {
      try store.attachmentContent(1)
    }
    try Data("hello!".utf8).write(to: URL(fileURLWithPath: path))
    #expect(throws: TaskerError.fileAccess(path: path, reason: "the file holds more bytes than recorded")) {
      try store.attachmentContent(1)
    }
  }

  @Test func badInputLeavesNoFileAndNoRow() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    #expect(throws: TaskerError.notFound(kind: .task, id: 7)) {
      try store.addAttachment(to: .task(7), name: "a", mediaType: "text/plain", read: chunkedReader([1], size: 1))
    }
    try store.addTask(TaskDraft(title: "t"))
    #expect(throws: TaskerError.invalidValue(field: "attachment name", reason: "must not contain control characters")) {
      try store.addAttachment(to: .task(1), name: "a\nb", mediaType: "text/plain", read: chunkedReader([1], size: 1))
    }
    struct ReadFailed: Error, Equatable {}
    #expect(throws: ReadFailed.self) {
      try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain") { throw ReadFailed() }
    }
    #expect(try store.attachments().isEmpty)
    let left = (try? FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory)) ?? []
    #expect(left.isEmpty, "\(left)")
    #expect(throws: TaskerError.notFound(kind: .attachment, id: 1)) { try store.attachmentContent(1) }
  }
}
