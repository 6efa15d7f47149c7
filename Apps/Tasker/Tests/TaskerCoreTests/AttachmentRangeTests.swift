import Foundation
import TaskAttachments
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// `AttachmentRange(parsing:)` (`--range START-END`) and ranged reads of
/// plain and sealed attachments through TaskAttachments' random access.
@Suite struct AttachmentRangeTests {
  @Test func parsesInclusiveRangesAndOpenEnds() throws {
    #expect(try AttachmentRange(parsing: "0-1023") == AttachmentRange(start: 0, through: 1023))
    #expect(try AttachmentRange(parsing: "5-5").bounds(byteCount: 6)! == (5, 1))
    #expect(try AttachmentRange(parsing: "100-").end == nil)
    #expect(try AttachmentRange(parsing: "007-010") == AttachmentRange(start: 7, through: 10))
    #expect(try AttachmentRange(parsing: "18446744073709551615-").start == UInt64.max)
    #expect(try AttachmentRange(parsing: "0-1023").description == "0-1023")
    #expect(try AttachmentRange(parsing: "9-").description == "9-")
  }

  @Test func refusesEverythingElse() {
    let shape = { (text: String) in
      TaskerError.invalidValue(
        field: "range", reason: "'\(text)' is not START-END or START- (inclusive byte offsets, for example 0-1023)")
    }
    for text in ["", "-", "-5", "5", "+1-2", "1-+2", "a-b", "1-2-3", " 1-2", "1-2 ", "0x10-20", "1--2", "٣-4", "1,2-3"]
    {
      #expect(throws: shape(text)) { try AttachmentRange(parsing: text) }
    }
    #expect(throws: TaskerError.invalidValue(field: "range", reason: "'5-3' ends before it starts")) {
      try AttachmentRange(parsing: "5-3")
    }
    for text in ["18446744073709551616-", "0-18446744073709551616", "99999999999999999999999-1"] {
      #expect(throws: TaskerError.invalidValue(field: "range", reason: "'\(text)' has an offset past 2^64 - 1")) {
        try AttachmentRange(parsing: text)
      }
    }
  }

  @Test func boundsNeverCutARangeShort() throws {
    #expect(try AttachmentRange(parsing: "0-").bounds(byteCount: 10)! == (0, 10))
    #expect(try AttachmentRange(parsing: "9-9").bounds(byteCount: 10)! == (9, 1))
    #expect(try AttachmentRange(parsing: "0-9").bounds(byteCount: 10)! == (0, 10))
    #expect(try AttachmentRange(parsing: "0-10").bounds(byteCount: 10) == nil)
    #expect(try AttachmentRange(parsing: "10-").bounds(byteCount: 10) == nil)
    #expect(try AttachmentRange(parsing: "0-").bounds(byteCount: 0) == nil)
    #expect(try AttachmentRange(parsing: "0-18446744073709551615").bounds(byteCount: UInt64.max) == nil)
  }

  /// A store with one task and one attachment of `bytes`, sealed or not.
  func store(with bytes: [UInt8], sealed: Bool, in directory: TemporaryDirectory) throws -> TaskStore {
    let (_, store) = try directory.newStore()
    try store.addTask(TaskDraft(title: "t"))
    try store.setAttachmentEncryption(sealed)
    let record = try store.addAttachment(
      to: .task(1), name: "data.bin", mediaType: "application/octet-stream", read: chunkedReader(bytes, size: 40_000))
    #expect(record.sealed == sealed)
    return store
  }

  func read(_ store: TaskStore, _ text: String) throws -> [UInt8] {
    var out = [UInt8]()
    let count = try store.readAttachment(id: 1, range: try AttachmentRange(parsing: text)) { out += $0 }
    #expect(count == UInt64(out.count))
    return out
  }

  @Test(arguments: [false, true])
  func rangesReadExactlyTheirBytesAcrossChunks(sealed: Bool) throws {
    let directory = try TemporaryDirectory()
    let bytes = SecureRandom.bytes(count: 2 * TaskerFiles.chunkByteCount + 70_001)
    let store = try store(with: bytes, sealed: sealed, in: directory)
    let last = bytes.count - 1
    for (start, end) in [(0, 0), (0, 1023), (65_535, 65_536), (1_000_000, 1_200_000), (last, last), (0, last)] {
      #expect(try read(store, "\(start)-\(end)") == Array(bytes[start...end]), "\(start)-\(end)")
    }
    #expect(try read(store, "\(last - 10)-") == Array(bytes[(last - 10)...]))
    let range = try AttachmentRange(parsing: "\(bytes.count)-")
    #expect(
      throws: TaskerError.rangeNotSatisfiable(record: "attachment/1", range: range, byteCount: UInt64(bytes.count))
    ) { try store.readAttachment(id: 1, range: range) { _ in Issue.record("nothing is written") } }
    let past = try AttachmentRange(parsing: "0-\(bytes.count)")
    #expect(
      throws: TaskerError.rangeNotSatisfiable(record: "attachment/1", range: past, byteCount: UInt64(bytes.count))
    ) { try store.readAttachment(id: 1, range: past) { _ in Issue.record("nothing is written") } }
    #expect(throws: TaskerError.notFound(kind: .attachment, id: 2)) {
      try store.readAttachment(id: 2, range: range) { _ in }
    }
  }

  @Test func anEmptyAttachmentFitsNoRange() throws {
    let directory = try TemporaryDirectory()
    let store = try store(with: [], sealed: false, in: directory)
    let range = try AttachmentRange(parsing: "0-")
    #expect(throws: TaskerError.rangeNotSatisfiable(record: "attachment/1", range: range, byteCount: 0)) {
      try store.readAttachment(id: 1, range: range) { _ in }
    }
    #expect(
      TaskerError.rangeNotSatisfiable(record: "attachment/1", range: range, byteCount: 0).hint
        == "the attachment is empty")
  }

  @Test func aRangeGoesToANewFileOnlyWhole() throws {
    let directory = try TemporaryDirectory()
    let bytes = SecureRandom.bytes(count: 300_000)
    let store = try store(with: bytes, sealed: true, in: directory)
    let out = directory.path("part.bin")
    #expect(try store.writeAttachment(id: 1, range: AttachmentRange(parsing: "100-199"), toNewFile: out) == 100)
    #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))) == Array(bytes[100...199]))
    let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    #expect(throws: TaskerError.outputExists(path: out)) {
      try store.writeAttachment(id: 1, range: AttachmentRange(parsing: "0-"), toNewFile: out)
    }
    let refused = directory.path("refused.bin")
    #expect(throws: TaskerError.self) {
      try store.writeAttachment(id: 1, range: AttachmentRange(parsing: "0-300000"), toNewFile: refused)
    }
    let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("refused") }
    #expect(left.isEmpty, "\(left)")
  }

  @Test func aSealedFileAlteredInTheRangeReleasesNothingOfIt() throws {
    let directory = try TemporaryDirectory()
    let bytes = SecureRandom.bytes(count: 300_000)
    let store = try store(with: bytes, sealed: true, in: directory)
    let path = store.attachmentsDirectory + "/1"
    var stored = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    stored[Attachment.wrapperByteCount + 150_000] ^= 1
    try Data(stored).write(to: URL(fileURLWithPath: path))
    var released = [UInt8]()
    #expect(throws: TaskerError.self) {
      try store.readAttachment(id: 1, range: AttachmentRange(parsing: "140000-160000")) { released += $0 }
    }
    #expect(released.isEmpty)
    #expect(try read(store, "0-99") == Array(bytes[0...99]), "chunks the range does not touch still open")
  }

  @Test func aRowAndFileThatDisagreeAreRefusedBeforeAnyByte() throws {
    let directory = try TemporaryDirectory()
    // A lookalike is sealed on the way in; recorded as plain, its file carries the magic of a plain row.
    let store = try store(with: Array("sealed text".utf8), sealed: true, in: directory)
    try store.connection.execute("UPDATE attachments SET key_id = NULL WHERE id = 1")
    #expect(
      throws: TaskerError.attachmentRefused(
        record: "attachment/1", reason: "its file is sealed but the database records it as plain")
    ) { try store.readAttachment(id: 1, range: AttachmentRange(parsing: "0-")) { _ in Issue.record("no byte") } }
    try store.connection.execute("UPDATE attachments SET file = '../t.db' WHERE id = 1")
    #expect(
      throws: TaskerError.attachmentRefused(
        record: "attachment/1", reason: "its file column is not a name Tasker makes")
    ) { try store.readAttachment(id: 1, range: AttachmentRange(parsing: "0-")) { _ in Issue.record("no byte") } }
  }
}
