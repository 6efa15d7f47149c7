import Foundation
import TaskKeyTestSupport
import XCTest

@testable import TaskAttachments
@testable import TaskCrypto
@testable import TaskKeyVectors

/// The deterministic generator of `Vectors/attachment-v1.json`: fixed keys,
/// salts from SHA-256 of a label through the test-only seam. It fails when
/// the committed file differs; `make vectors` (TASKKEY_WRITE_VECTORS=1)
/// rewrites it. Every case is also run through the random-access reader.
final class AttachmentVectorGenerationTests: XCTestCase {
  static let url = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors/attachment-v1.json")

  static let keys = [
    AttachmentVectors.Key(kid: "0a0b0c0d", key: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"),
    AttachmentVectors.Key(kid: "deadbeef", key: "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"),
  ]

  static func message(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) } }

  /// Seals with a salt derived from `label`.
  static func seal(_ message: [UInt8], key: NoteKey, record: String, label: String) throws -> [UInt8] {
    let salt = Array(SHA256.hash(data: Array("attachment-v1 salt \(label)".utf8)).bytes[..<24])
    let wrapper = Attachment.wrapper(keyID: key.id)
    let sealer = try ChunkedEncryption.Sealer(
      key: key.key, context: Attachment.context(wrapper: wrapper, record: record), salt: salt)
    var out = wrapper
    try sealer.update(message) { out += $0 }
    try sealer.finish { out += $0 }
    return out
  }

  static func file() throws -> AttachmentVectors.File {
    let keyring = try AttachmentVectors.keyring(keys)
    let primary = keyring.primary
    let second = keyring.keys[1]
    var tests = [AttachmentVectors.Case]()
    func add(
      _ comment: String, record: String = "attachment/1", _ file: [UInt8], plaintext: [UInt8]? = nil, _ expect: String
    ) {
      tests.append(
        AttachmentVectors.Case(
          id: tests.count + 1, comment: comment, record: record, file: file.lowercaseHex,
          plaintext: plaintext?.lowercaseHex, expect: expect))
    }
    let short = message(5)
    let oneChunk = message(16_384)
    let threeChunks = message(2 * 16_384 + 100)
    let sealedShort = try seal(short, key: primary, record: "attachment/1", label: "short")
    let sealedChunk = try seal(oneChunk, key: primary, record: "attachment/1", label: "chunk")
    let sealedThree = try seal(threeChunks, key: primary, record: "attachment/1", label: "three")
    let chunk0 = 69..<(69 + 16_400)
    let chunk1 = (69 + 16_400)..<(69 + 32_800)

    add("empty attachment", try seal([], key: primary, record: "attachment/1", label: "empty"), plaintext: [], "valid")
    add("five bytes", sealedShort, plaintext: short, "valid")
    add("exactly one chunk: a full chunk and an empty final chunk", sealedChunk, plaintext: oneChunk, "valid")
    add(
      "one chunk and one byte", try seal(message(16_385), key: primary, record: "attachment/1", label: "chunk+1"),
      plaintext: message(16_385), "valid")
    add("two full chunks and a short final chunk", sealedThree, plaintext: threeChunks, "valid")
    add(
      "sealed by a non-primary key of the keyring",
      try seal(short, key: second, record: "attachment/1", label: "second"), plaintext: short, "valid")
    add(
      "a non-ASCII record name", record: "attachment/ü",
      try seal(short, key: primary, record: "attachment/ü", label: "utf8"), plaintext: short, "valid")
    add("plain file: text", Array("hello, world\n".utf8), "plain")
    add("plain file: empty", [], "plain")
    add("plain file: the magic without its last byte", Array(Attachment.magic.dropLast()), "plain")
    add("plain file: a sealed note value is not an attachment", Array("tc1.0a0b0c0d:AAAA".utf8), "plain")
    add("the magic and nothing else", Attachment.magic, "truncated_wrapper")
    add("wrapper cut inside the key id", Array(sealedShort[..<11]), "truncated_wrapper")
    var version = sealedShort
    version[8] = 2
    add("format version 2", version, "unsupported_version")
    var version0 = sealedShort
    version0[8] = 0
    add("format version 0", version0, "unsupported_version")
    var unknown = sealedShort
    unknown.replaceSubrange(9..<13, with: [0x01, 0x02, 0x03, 0x04])
    add("a key id the keyring does not hold", unknown, "unknown_key_id")
    add("opened for another record", record: "attachment/2", sealedShort, "commitment_mismatch")
    var otherKid = sealedShort
    otherKid.replaceSubrange(9..<13, with: [0xde, 0xad, 0xbe, 0xef])
    add("key id changed to another key of the keyring", otherKid, "commitment_mismatch")
    var salt = sealedShort
    salt[13] ^= 0x01
    add("salt altered", salt, "commitment_mismatch")
    var commitment = sealedShort
    commitment[68] ^= 0x80
    add("commitment altered", commitment, "commitment_mismatch")
    add("ends inside the salt", Array(sealedShort[..<30]), "truncated_header")
    add("ends after the header: no chunk", Array(sealedShort[..<69]), "missing_final_chunk")
    add("ends after a full chunk: final chunk missing", Array(sealedChunk[..<chunk0.upperBound]), "missing_final_chunk")
    add("final chunk shorter than a tag", Array(sealedChunk[..<(chunk0.upperBound + 10)]), "truncated_chunk")
    add("cut inside the final chunk", Array(sealedThree.dropLast()), "final_chunk_authentication_failed")
    var finalBit = sealedShort
    finalBit[70] ^= 0x01
    add("a bit flipped in the final chunk", finalBit, "final_chunk_authentication_failed")
    var chunkBit = sealedThree
    chunkBit[chunk1.lowerBound + 100] ^= 0x01
    add("a bit flipped in chunk 1", chunkBit, "chunk_authentication_failed")
    var tagBit = sealedThree
    tagBit[chunk0.upperBound - 1] ^= 0x01
    add("a bit flipped in chunk 0's tag", tagBit, "chunk_authentication_failed")
    var swapped = sealedThree
    swapped.replaceSubrange(chunk0, with: sealedThree[chunk1])
    swapped.replaceSubrange(chunk1, with: sealedThree[chunk0])
    add("chunks 0 and 1 swapped", swapped, "chunk_out_of_place")
    var duplicated = sealedThree
    duplicated.replaceSubrange(chunk1, with: sealedThree[chunk0])
    add("chunk 0 in place of chunk 1", duplicated, "chunk_out_of_place")
    let other = try seal(threeChunks, key: primary, record: "attachment/1", label: "other")
    var spliced = sealedThree
    spliced.replaceSubrange(chunk1, with: other[chunk1])
    add("chunk 1 spliced from another attachment under the same key", spliced, "chunk_authentication_failed")
    add("one byte appended", sealedShort + [0], "trailing_data")
    add("a copy of the final chunk appended", sealedShort + sealedShort[69...], "trailing_data")
    // Issue 22, item 13: extended by whole 16,400-byte pieces, or to a whole
    // number of them; the stream and the random-access reader agree.
    let junk = { (count: Int) in [UInt8](repeating: 0xa5, count: count) }
    let finalLength = (sealedThree.count - 69) % 16_400
    add(
      "junk appended up to a whole number of 16,400-byte pieces: the final chunk is missing (step 7 first)",
      sealedThree + junk(16_400 - finalLength), "missing_final_chunk")
    add("one whole 16,400-byte piece of junk appended", sealedThree + junk(16_400), "trailing_data")
    add("two whole 16,400-byte pieces of junk appended", sealedThree + junk(32_800), "trailing_data")
    add(
      "a copy of chunks 0 and 1 appended after the final chunk",
      sealedThree + sealedThree[chunk0.lowerBound..<chunk1.upperBound],
      "trailing_data")
    return AttachmentVectors.File(
      format: AttachmentVectors.format, version: 1,
      description:
        "Attachment files, format v1 (docs/formats/attachment.md). Open each hex 'file' with the keyring 'keys' "
        + "(the first is the primary) for the case's 'record'; 'expect' is valid (opens to 'plaintext'), plain "
        + "(passes through unchanged) or the error code.",
      keys: keys, tests: tests)
  }

  func testTheCommittedVectorsMatchTheGenerator() throws {
    XCTAssertEqual(
      try CommittedVectors.drifted(json: try Self.file(), name: "attachment-v1.json"), [],
      "Vectors/attachment-v1.json drifted; run 'make vectors' and review the diff")
  }

  func testEveryCaseGivesItsOutcomeThroughTheStreamAndTheReader() throws {
    let data = try Data(contentsOf: Self.url)
    let report = try XCTUnwrap(AttachmentVectors.check(data))
    XCTAssertEqual(report.failures, [])
    XCTAssertGreaterThan(report.cases, 30)
    let file = try JSONDecoder().decode(AttachmentVectors.File.self, from: data)
    let keyring = try AttachmentVectors.keyring(file.keys)
    let directory = try TemporaryDirectory()
    for test in file.tests {
      let path = directory.path("case-\(test.id)")
      try Data(try XCTUnwrap(AttachmentVectors.hex(test.file))).write(to: URL(fileURLWithPath: path))
      do {
        let reader = try AttachmentReader(path: path, keyring: keyring, record: test.record)
        let bytes = try reader.read(offset: 0, count: Int(reader.byteCount))
        XCTAssertEqual(reader.isSealed ? "valid" : "plain", test.expect, "case \(test.id)")
        if test.expect == "valid" { XCTAssertEqual(bytes.lowercaseHex, test.plaintext, "case \(test.id)") }
      } catch let error as AttachmentError {
        XCTAssertEqual(error.code, test.expect, "case \(test.id) (\(test.comment))")
      }
    }
  }

  func testAWrongExpectationFailsTheCheck() throws {
    var file = try Self.file()
    file.tests[0].expect = "plain"
    let report = try XCTUnwrap(AttachmentVectors.check(try JSONEncoder().encode(file)))
    XCTAssertEqual(report.failures, ["case 1 (empty attachment): expected plain, got valid"])
  }
}
