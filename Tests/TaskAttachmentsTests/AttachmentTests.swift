import Foundation
import TaskCrypto
import TaskKeyTestSupport
import TaskSystem
import TaskSystemTesting
import XCTest

@testable import TaskAttachments

/// Sealing, opening, pass-through and rewrap of attachment files.
final class AttachmentTests: XCTestCase {
  var directory: TemporaryDirectory!
  var keyring: Keyring!

  override func setUpWithError() throws {
    directory = try TemporaryDirectory()
    keyring = try Keyring.generate()
    SystemIO.fileSystem = PosixFileSystem()
  }

  override func tearDown() {
    SystemIO.fileSystem = PosixFileSystem()
  }

  func write(_ name: String, _ bytes: [UInt8]) throws -> String {
    let path = directory.path(name)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  func read(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

  /// Names in the directory, to prove no temporary file is left.
  func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() }

  func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) } }

  func testSealAndOpenAFileAtBoundarySizes() throws {
    for size in [0, 1, 16_383, 16_384, 16_385, 100_000] {
      let plain = try write("plain-\(size)", bytes(size))
      let sealed = directory.path("sealed-\(size)")
      let summary = try Attachment.seal(file: plain, to: sealed, using: keyring, record: "attachment/\(size)")
      XCTAssertEqual(summary.keyID, keyring.primaryID)
      XCTAssertEqual(summary.plaintextByteCount, UInt64(size))
      let stored = try read(sealed)
      XCTAssertEqual(UInt64(stored.count), try Attachment.sealedByteCount(plaintextByteCount: UInt64(size)))
      XCTAssertEqual(UInt64(stored.count), summary.storedByteCount)
      XCTAssertEqual(Array(stored[..<9]), Attachment.magic + [1])
      XCTAssertEqual(
        Array(stored[9..<13]), [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: keyring.primaryID.rawValue >> $0) })
      let opened = directory.path("opened-\(size)")
      let back = try Attachment.open(file: sealed, to: opened, using: keyring, record: "attachment/\(size)")
      XCTAssertTrue(back.isSealed)
      XCTAssertEqual(try read(opened), bytes(size))
    }
  }

  func testAPlainFileOpensUnchangedAndTheMagicAloneMakesAFileSealed() throws {
    for plain in [[], [0x89], Array(Attachment.magic.dropLast()), Array("hello".utf8), Array("tc1.00000000:x".utf8)] {
      let path = try write("p", plain)
      let out = directory.path("o")
      let summary = try Attachment.open(file: path, to: out, using: keyring, record: "r")
      XCTAssertFalse(summary.isSealed)
      XCTAssertEqual(try read(out), plain)
      try FileManager.default.removeItem(atPath: out)
    }
    // The magic followed by anything short is a truncated attachment, never plain.
    let path = try write("m", Attachment.magic + [1, 2])
    XCTAssertThrowsError(try Attachment.open(file: path, to: directory.path("o"), using: keyring, record: "r")) {
      XCTAssertEqual($0 as? AttachmentError, .truncatedWrapper(byteCount: 10))
    }
    XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("o")))
  }

  func testAnotherRecordAnotherVersionOrAnUnknownKeyIsRefused() throws {
    let plain = try write("plain", bytes(5000))
    let sealed = directory.path("sealed")
    _ = try Attachment.seal(file: plain, to: sealed, using: keyring, record: "attachment/1")
    XCTAssertThrowsError(
      try Attachment.open(file: sealed, to: directory.path("o"), using: keyring, record: "attachment/2")
    ) {
      XCTAssertEqual($0 as? AttachmentError, .crypto(.commitmentMismatch))
    }
    var stored = try read(sealed)
    stored[8] = 2
    let version = try write("v2", stored)
    XCTAssertThrowsError(
      try Attachment.open(file: version, to: directory.path("o"), using: keyring, record: "attachment/1")
    ) {
      XCTAssertEqual($0 as? AttachmentError, .unsupportedVersion(2))
    }
    let other = try Keyring.generate()
    XCTAssertThrowsError(
      try Attachment.open(file: sealed, to: directory.path("o"), using: other, record: "attachment/1")
    ) {
      XCTAssertEqual($0 as? AttachmentError, .crypto(.unknownKeyID(keyring.primaryID)))
    }
    // The key id is bound: naming another key of the keyring fails the commitment.
    var rotated = keyring!
    let second = try rotated.rotate()
    stored = try read(sealed)
    for (offset, byte) in [24, 16, 8, 0].map({ UInt8(truncatingIfNeeded: second.id.rawValue >> $0) }).enumerated() {
      stored[9 + offset] = byte
    }
    let swapped = try write("swapped", stored)
    XCTAssertThrowsError(
      try Attachment.open(file: swapped, to: directory.path("o"), using: rotated, record: "attachment/1")
    ) {
      XCTAssertEqual($0 as? AttachmentError, .crypto(.commitmentMismatch))
    }
    XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("o")))
  }

  func testAFailedOpenLeavesNoFileUnderTheRealNameAndNoTemporaryFile() throws {
    let plain = try write("plain", bytes(200_000))
    let sealed = directory.path("sealed")
    _ = try Attachment.seal(file: plain, to: sealed, using: keyring, record: "r")
    var stored = try read(sealed)
    stored[stored.count - 1] ^= 1  // the final chunk: every earlier chunk verifies and is written first
    let broken = try write("broken", stored)
    let before = try names()
    XCTAssertThrowsError(try Attachment.open(file: broken, to: directory.path("out"), using: keyring, record: "r")) {
      XCTAssertEqual($0 as? AttachmentError, .crypto(.finalChunkAuthenticationFailed(chunkIndex: 12)))
    }
    XCTAssertEqual(try names(), before)
  }

  func testAWriteFailureMidwayRemovesTheTemporaryFile() throws {
    let plain = try write("plain", bytes(3 << 20))
    let before = try names()
    var writes = 0
    SystemIO.fileSystem = FaultInjectingFileSystem { step, _ in
      guard step == .write else { return nil }
      writes += 1
      return writes == 2 ? ENOSPC : nil
    }
    XCTAssertThrowsError(try Attachment.seal(file: plain, to: directory.path("sealed"), using: keyring, record: "r")) {
      guard case .system(.failed("write", _, ENOSPC)) = $0 as? AttachmentError else { return XCTFail("\($0)") }
    }
    // Every other step of the durable write, failing in turn: nothing under
    // the real name (before the link), no temporary file left.
    for failing in [FileStep.createExclusive, .fsync, .close, .link] {
      SystemIO.fileSystem = FaultInjectingFileSystem { step, _ in step == failing ? EIO : nil }
      XCTAssertThrowsError(try Attachment.seal(file: plain, to: directory.path("sealed"), using: keyring, record: "r"))
      XCTAssertEqual(try names(), before, "\(failing)")
    }
    // After the link the file is whole under its name; a failed directory
    // flush is still reported.
    SystemIO.fileSystem = FaultInjectingFileSystem { step, _ in step == .fsyncDirectory ? EIO : nil }
    XCTAssertThrowsError(try Attachment.seal(file: plain, to: directory.path("sealed"), using: keyring, record: "r"))
    XCTAssertEqual(try names(), (before + ["sealed"]).sorted())
    try FileManager.default.removeItem(atPath: directory.path("sealed"))
    SystemIO.fileSystem = FaultInjectingFileSystem { step, _ in step == .link ? EIO : nil }
    XCTAssertThrowsError(try Attachment.seal(file: plain, to: directory.path("sealed"), using: keyring, record: "r"))
    XCTAssertEqual(try names(), before)
  }

  func testAnExistingDestinationIsNeverReplaced() throws {
    let plain = try write("plain", bytes(10))
    let existing = try write("existing", [1, 2, 3])
    XCTAssertThrowsError(try Attachment.seal(file: plain, to: existing, using: keyring, record: "r")) {
      XCTAssertEqual($0 as? AttachmentError, .destinationExists(path: existing))
    }
    XCTAssertEqual(try read(existing), [1, 2, 3])
  }

  func testRewrapReSealsUnderThePrimaryInPlace() throws {
    let plain = try write("plain", bytes(70_000))
    let sealed = directory.path("sealed")
    _ = try Attachment.seal(file: plain, to: sealed, using: keyring, record: "attachment/9")
    let old = keyring.primaryID
    var rotated = keyring!
    let new = try rotated.rotate()
    let before = try names()
    let summary = try Attachment.rewrap(file: sealed, using: rotated, record: "attachment/9")
    XCTAssertEqual(summary.keyID, new.id)
    XCTAssertEqual(summary.plaintextByteCount, 70_000)
    XCTAssertEqual(try names(), before)
    // The old key can now be retired; the attachment still opens.
    try rotated.retire(old)
    _ = try Attachment.open(file: sealed, to: directory.path("o"), using: rotated, record: "attachment/9")
    XCTAssertEqual(try read(directory.path("o")), bytes(70_000))
    // A plain file does not rewrap, and a broken one is left as it was.
    XCTAssertThrowsError(try Attachment.rewrap(file: plain, using: rotated, record: "r")) {
      XCTAssertEqual($0 as? AttachmentError, .notSealed(path: plain))
    }
    var stored = try read(sealed)
    stored[100] ^= 1
    let broken = try write("broken", stored)
    XCTAssertThrowsError(try Attachment.rewrap(file: broken, using: rotated, record: "attachment/9"))
    XCTAssertEqual(try read(broken), stored)
  }

  func testStreamsOverFileDescriptorsAndClosures() throws {
    let message = bytes(40_000)
    var sealed = [UInt8]()
    var offset = 0
    _ = try Attachment.seal(
      reading: { buffer in
        let count = min(buffer.count, message.count - offset, 3000)
        message[offset..<(offset + count)].withUnsafeBytes { buffer.copyMemory(from: $0) }
        offset += count
        return count
      }, writing: { sealed += $0 }, using: keyring, record: "r")
    let path = try write("s", sealed)
    let input = open(path, O_RDONLY)
    defer { close(input) }
    let outPath = directory.path("o")
    let output = open(outPath, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    let summary = try Attachment.open(fileDescriptor: input, to: output, using: keyring, record: "r")
    close(output)
    XCTAssertEqual(summary.plaintextByteCount, 40_000)
    XCTAssertEqual(try read(outPath), message)
  }

  func testSettingsAreOffByDefaultAndStoreFollowsThem() throws {
    XCTAssertFalse(AttachmentSettings().sealsNewAttachments)
    for on in [false, true] {
      let settings = AttachmentSettings(sealsNewAttachments: on)
      XCTAssertEqual(try AttachmentSettings(fileContents: settings.fileContents, path: "s"), settings)
    }
    XCTAssertThrowsError(try AttachmentSettings(fileContents: Array("seal-new-attachments=yes\n".utf8), path: "s")) {
      XCTAssertEqual($0 as? AttachmentError, .malformedSettings(path: "s"))
    }
    XCTAssertEqual(try AttachmentSettings.load(fromDirectory: directory.url.path), AttachmentSettings())
    try AttachmentSettings(sealsNewAttachments: true).save(toDirectory: directory.url.path)
    XCTAssertEqual(try read(directory.path(AttachmentSettings.fileName)), Array("seal-new-attachments=on\n".utf8))
    XCTAssertTrue(try AttachmentSettings.load(fromDirectory: directory.url.path).sealsNewAttachments)
    try AttachmentSettings().save(toDirectory: directory.url.path)
    XCTAssertFalse(try AttachmentSettings.load(fromDirectory: directory.url.path).sealsNewAttachments)
    _ = try write(AttachmentSettings.fileName, Array("seal-new-attachments=on\nextra".utf8))
    XCTAssertThrowsError(try AttachmentSettings.load(fromDirectory: directory.url.path)) {
      guard case .malformedSettings = $0 as? AttachmentError else { return XCTFail("\($0)") }
    }
    try FileManager.default.removeItem(atPath: directory.path(AttachmentSettings.fileName))
    let plain = try write("plain", bytes(100))
    let off = try Attachment.store(
      file: plain, to: directory.path("off"), using: keyring, record: "r", settings: AttachmentSettings())
    XCTAssertFalse(off.isSealed)
    XCTAssertEqual(try read(directory.path("off")), bytes(100))
    let on = try Attachment.store(
      file: plain, to: directory.path("on"), using: keyring, record: "r",
      settings: AttachmentSettings(sealsNewAttachments: true))
    XCTAssertTrue(on.isSealed)
    XCTAssertTrue(Attachment.isSealed(prefix: try read(directory.path("on"))))
    // A source that begins with the magic is sealed even when sealing is off.
    let lookalike = try write("lookalike", Attachment.magic + [9, 9])
    let stored = try Attachment.store(
      file: lookalike, to: directory.path("l"), using: keyring, record: "r", settings: AttachmentSettings())
    XCTAssertTrue(stored.isSealed)
    _ = try Attachment.open(file: directory.path("l"), to: directory.path("l2"), using: keyring, record: "r")
    XCTAssertEqual(try read(directory.path("l2")), Attachment.magic + [9, 9])
  }

  func testRangeReadsOfSealedAndPlainFiles() throws {
    let message = bytes(3 * 16_384 + 500)
    let plain = try write("plain", message)
    let sealed = directory.path("sealed")
    _ = try Attachment.seal(file: plain, to: sealed, using: keyring, record: "r")
    for path in [plain, sealed] {
      let reader = try AttachmentReader(path: path, keyring: keyring, record: "r")
      XCTAssertEqual(reader.isSealed, path == sealed)
      XCTAssertEqual(reader.byteCount, UInt64(message.count))
      for (offset, count) in [(0, 10), (16_380, 10), (message.count - 7, 7), (message.count, 0), (29_000, 20_000)] {
        XCTAssertEqual(try reader.read(offset: UInt64(offset), count: count), Array(message[offset..<(offset + count)]))
      }
      XCTAssertThrowsError(try reader.read(offset: UInt64(message.count) - 1, count: 2)) {
        guard case .crypto(.rangeOutOfBounds) = $0 as? AttachmentError else { return XCTFail("\($0)") }
      }
    }
    var stored = try read(sealed)
    stored.removeLast()
    let cut = try write("cut", stored)
    XCTAssertThrowsError(try AttachmentReader(path: cut, keyring: keyring, record: "r")) {
      XCTAssertEqual($0 as? AttachmentError, .crypto(.finalChunkAuthenticationFailed(chunkIndex: 3)))
    }
  }
}
