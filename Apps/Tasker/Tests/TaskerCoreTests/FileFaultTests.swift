import Foundation
import TaskCrypto
import TaskSystem
import TaskSystemTesting
import TaskerTestSupport
import Testing

@testable import TaskerCore

@Suite("Attachment files: a fault at any write step leaves no file and no row")
struct FileFaultTests {
  static let steps: [FileStep] = [.createExclusive, .write, .fsync, .close, .rename, .fsyncDirectory]

  /// The disk fills (ENOSPC) at one step of an attachment write, plain or
  /// sealed: the add fails with a typed error, and neither a row nor a file
  /// (under its final or its temporary name) is left; the same add then
  /// succeeds and reads back.
  @Test(arguments: steps, [false, true])
  func aFailedStepLeavesNothing(_ failing: FileStep, sealed: Bool) throws {
    let directory = try TemporaryDirectory()
    let files = FaultInjectingFileSystem()
    let store = try TaskStore(
      databasePath: directory.path("t.db"), keys: try Keyring.generate(), create: true, fileSystem: files)
    try store.setAttachmentEncryption(sealed)
    try store.addTask(TaskDraft(title: "t"))
    let content = [UInt8](repeating: 1, count: 1000)
    files.fault = { step, path in step == failing && path.contains("/attachments") ? ENOSPC : nil }
    var chunks = [content, []]
    let error = #expect(throws: TaskerError.self) {
      try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain") { chunks.removeFirst() }
    }
    guard case .system? = error else {
      Issue.record("expected TaskerError.system, got \(String(describing: error))")
      return
    }
    #expect(try store.attachments().isEmpty)
    let left = (try? FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory)) ?? []
    #expect(left.isEmpty, "\(failing): \(left)")

    files.fault = nil
    chunks = [content, []]
    let record = try store.addAttachment(to: .task(1), name: "a", mediaType: "text/plain") { chunks.removeFirst() }
    #expect(record.id == 1 && record.sealed == sealed && record.byteCount == 1000)
    var out = [UInt8]()
    try store.readAttachment(id: record.id) { out += $0 }
    #expect(out == content)
  }
}
