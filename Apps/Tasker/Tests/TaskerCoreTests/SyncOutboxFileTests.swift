import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// The outbox of schema 12 (SyncRows+Outbox.swift): each object in a file
/// of its own beside the database, its row keeping the SHA-256; a file is
/// read back only as the bytes its row names, and a file without a row
/// never outlives the next upload.
@Suite struct SyncOutboxFileTests {
  static let object: [UInt8] = Array("an object's sealed bytes".utf8) + [0, 1, 2, 0xff]

  func bytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
  }

  @Test func anObjectIsKeptInItsFileAndItsRowNamesItsDigest() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.withSyncTransaction { try $0.addToOutbox(seq: 0x2a, object: Self.object) }
    let path = store.databasePath + ".sync-outbox/000000000000002a"
    #expect(bytes(path) == Self.object)
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    let folder = try FileManager.default.attributesOfItem(atPath: store.databasePath + ".sync-outbox")
    #expect((folder[.posixPermissions] as? Int) == 0o700)
    let row = try store.connection.prepare("SELECT length(object), hex(digest) FROM sync_outbox WHERE seq = 42")
      .first { "\($0.integer(0)) \($0.text(1))" }
    #expect(row == "0 \(SHA256.hash(data: Self.object).bytes.map { String(format: "%02X", $0) }.joined())")
    #expect(try store.withSyncTransaction { try $0.outboxObject(seq: 42) } == .object(Self.object))
    #expect(try store.withSyncTransaction { try $0.outboxSeqs() } == [42])

    // Its file goes once its row's deletion has committed, and not when that rolls back.
    struct Undo: Error {}
    #expect(throws: Undo.self) {
      try store.withSyncTransaction { rows in
        try rows.removeFromOutbox(seq: 42)
        throw Undo()
      }
    }
    #expect(bytes(path) == Self.object)
    try store.withSyncTransaction { try $0.removeFromOutbox(seq: 42) }
    #expect(bytes(path) == nil)
    #expect(try store.withSyncTransaction { try $0.outboxObject(seq: 42) } == nil)
  }

  @Test(arguments: ["altered", "cut", "extended", "removed", "a folder"])
  func aFileThatIsNotTheBytesItsRowNamesIsDamaged(_ damage: String) throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.withSyncTransaction { try $0.addToOutbox(seq: 7, object: Self.object) }
    let path = store.databasePath + ".sync-outbox/0000000000000007"
    var altered = Self.object
    switch damage {
    case "altered": altered[3] ^= 1
    case "cut": altered.removeLast()
    case "extended": altered.append(0)
    default: break
    }
    try FileManager.default.removeItem(atPath: path)
    if damage == "a folder" {
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    } else if damage != "removed" {
      try Data(altered).write(to: URL(fileURLWithPath: path))
    }
    #expect(try store.withSyncTransaction { try $0.outboxObject(seq: 7) } == .damaged(path: path))
  }

  @Test func aFileNoRowNamesGoesWithTheNextUploadAndTheNextObjectOfItsSeqReplacesIt() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    struct Killed: Error {}
    // A transaction that wrote object 1 and rolled back leaves its file, never its row.
    #expect(throws: Killed.self) {
      try store.withSyncTransaction { rows in
        try rows.addToOutbox(seq: 1, object: Self.object)
        throw Killed()
      }
    }
    let folder = store.databasePath + ".sync-outbox"
    #expect(bytes(folder + "/0000000000000001") == Self.object)
    #expect(try store.withSyncTransaction { try $0.outboxSeqs() }.isEmpty)
    // The next object of seq 1 takes the name.
    try store.withSyncTransaction { try $0.addToOutbox(seq: 1, object: [9, 9]) }
    #expect(try store.withSyncTransaction { try $0.outboxObject(seq: 1) } == .object([9, 9]))
    // Strays: a file of a seq without a row; other names are none of Tasker's and stay.
    for name in ["0000000000000002", "00000000000003", "notes.txt", "000000000000000G"] {
      try Data([1]).write(to: URL(fileURLWithPath: folder + "/" + name))
    }
    try store.withSyncTransaction { try $0.removeStrayOutboxFiles() }
    let left = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    #expect(left == ["0000000000000001", "000000000000000G", "00000000000003", "notes.txt"])
  }

  @Test func anObjectKeptInItsRowBySchema11IsReadAsItIsAndForgottenWithTheOutbox() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    try store.connection.prepare("INSERT INTO sync_outbox (seq, object) VALUES (3, ?)").run([.blob(Self.object)])
    #expect(try store.withSyncTransaction { try $0.outboxObject(seq: 3) } == .object(Self.object))
    try store.withSyncTransaction { try $0.addToOutbox(seq: 4, object: [4]) }
    try store.withSyncTransaction { try $0.forgetTarget() }
    #expect(try store.withSyncTransaction { try $0.outboxSeqs() }.isEmpty)
    #expect(bytes(store.databasePath + ".sync-outbox/0000000000000004") == nil)
  }

  @Test func aRowWithADigestAndBytesOrADigestOfAnotherLengthIsRefused() throws {
    let directory = try TemporaryDirectory()
    let (_, store) = try directory.newStore()
    for values in ["(1, X'00', zeroblob(32))", "(2, X'', zeroblob(31))"] {
      #expect(throws: TaskerError.self) {
        try store.connection.execute("INSERT INTO sync_outbox (seq, object, digest) VALUES \(values)")
      }
    }
  }
}
