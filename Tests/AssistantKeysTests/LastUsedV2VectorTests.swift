import Foundation
import TaskCrypto
import TaskKeyTestSupport
import Testing

@testable import AssistantKeys
@testable import TaskKeyVectors

/// The deterministic generator of `Vectors/assistant-last-used-v2.json`:
/// an authentic version-2 last-used file and its variants, each with the
/// full read's outcome and verify's search for one id, computed by the
/// real reader (and re-derived by scripts/check_assistant_vectors.py from
/// the spec alone).
enum LastUsedV2VectorGenerator {
  typealias File = AssistantKeyVectors.LastUsedFileV2
  typealias V2 = LastUsedFormatV2

  static func key(_ bytes: [UInt8]) throws -> SymmetricKey {
    try bytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
  }

  static func makeFile() throws -> File {
    let integrityKey = try key([UInt8](0..<32))
    let otherKey = try key((0..<32).map { UInt8(0xff - $0) })
    let keyed = HMACSHA256(key: integrityKey)
    let ids = try AssistantKeyVectorGenerator.validKeys().prefix(4).map(\.key.id).sorted()
    let values = ids.map(V2.idValue)
    let (used, later): (UInt64, UInt64) = (1_800_000_100, 1_800_000_160)
    func stamp(_ index: Int, _ time: UInt64, _ with: HMACSHA256? = nil) -> ArraySlice<UInt8> {
      V2.stamp(id: values[index], time: time, keyed: with ?? keyed)[...]
    }
    // Keys 0 and 2 used, key 1 never; key 3 has no slot.
    let slots: [(id: UInt64, stamp: ArraySlice<UInt8>?)] = [
      (values[0], stamp(0, used)), (values[1], nil), (values[2], stamp(2, later)),
    ]
    let good = V2.encode(slots, key: integrityKey)
    let table = [ids[0].text: Int64(used), ids[2].text: Int64(later)]
    let slotStart = { (index: Int) in V2.headerByteCount + V2.slotByteCount * index }

    var tests = [File.Test]()
    func add(_ comment: String, _ file: [UInt8], search: Int? = 0) {
      let (result, damage, lastUsed) = AssistantKeyVectors.lastUsedOutcome(file, integrityKey: integrityKey)
      let searched = search.map { AssistantKeyVectors.lastUsedSearch(file, id: ids[$0], integrityKey: integrityKey) }
      tests.append(
        File.Test(
          id: tests.count + 1, comment: comment, file: Hex.encode(file), result: result, lastUsed: lastUsed,
          damage: damage, searchID: search.map { ids[$0].text }, search: searched?.0, searchTime: searched?.1))
    }
    func resealed(_ bytes: [UInt8]) -> [UInt8] {
      var mac = HMACSHA256(key: integrityKey)
      mac.update(data: V2.headerLabel)
      mac.update(data: Array(bytes[0..<V2.macOffset]))
      var edited = bytes
      edited.replaceSubrange(V2.macOffset..<V2.headerByteCount, with: mac.finalize())
      return edited
    }
    func slotEdited(_ index: Int, _ stampBytes: ArraySlice<UInt8>) -> [UInt8] {
      var edited = good
      edited.replaceSubrange((slotStart(index) + 8)..<(slotStart(index) + 48), with: stampBytes)
      return edited
    }
    precondition(AssistantKeyVectors.lastUsedOutcome(good, integrityKey: integrityKey).2 == table)

    add("three slots: the first key used", good, search: 0)
    add("the second key's slot: never used (zeros)", good, search: 1)
    add("the third key used", good, search: 2)
    add("a key with no slot", good, search: 3)
    add("no slots", V2.encode([], key: integrityKey), search: 0)
    var flipped = good
    flipped[V2.macOffset] ^= 0x01
    add("a header MAC byte changed", flipped)
    var count = good
    count[38] ^= 0x01
    add("the count changed, header MAC unchanged", count)
    var foreign = good
    var mac = HMACSHA256(key: otherKey)
    mac.update(data: V2.headerLabel)
    mac.update(data: Array(good[0..<V2.macOffset]))
    foreign.replaceSubrange(V2.macOffset..<V2.headerByteCount, with: mac.finalize())
    add("the header MAC under another key", foreign)
    count = good
    count.replaceSubrange(35..<39, with: RegistryV2VectorGenerator.bigEndian(4, 4))
    add("count 4 for 3 slots, re-authenticated", resealed(count))
    count.replaceSubrange(35..<39, with: RegistryV2VectorGenerator.bigEndian(1_000_001, 4))
    add("count 1,000,001, re-authenticated", resealed(count))
    add("the last byte cut off", Array(good.dropLast()))
    add("one byte appended", good + [0])
    add("cut to 70 bytes", Array(good[0..<70]))
    var swapped = good
    swapped.replaceSubrange(slotStart(0)..<slotStart(1), with: good[slotStart(2)..<slotStart(3)])
    swapped.replaceSubrange(slotStart(2)..<slotStart(3), with: good[slotStart(0)..<slotStart(1)])
    add("the first and last slots swapped: the full read refuses, the search misses", swapped, search: 2)
    var time = good
    time[slotStart(0) + 15] ^= 0x01
    add("the first key's time changed, slot MAC unchanged: never used", time, search: 0)
    var torn = good
    torn.replaceSubrange((slotStart(0) + 8)..<(slotStart(0) + 28), with: stamp(0, later)[0..<20])
    add("the first key's slot torn: half of a newer time and MAC", torn, search: 0)
    add("the first key's slot under another key", slotEdited(0, stamp(0, used, HMACSHA256(key: otherKey))), search: 0)
    add("the third key's slot stamped for the first key's id", slotEdited(2, stamp(0, later)), search: 2)
    add("time 0, authentic: never used", slotEdited(0, stamp(0, 0)), search: 0)
    add("time 10^18, authentic: never used", slotEdited(0, stamp(0, 1_000_000_000_000_000_000)), search: 0)
    var version3 = good
    version3[33] = UInt8(ascii: "3")
    add("version line v3", version3, search: nil)
    add(
      "a version-1 file of the same uses is still read",
      LastUsedFormat.encode([ids[0]: Int64(used), ids[2]: Int64(later)], key: integrityKey), search: nil)
    var unmarked = good
    unmarked[0] ^= 0x01
    add(
      "the version line's first byte changed: read as version 1 and refused; verify records nothing", unmarked,
      search: 0)

    return File(
      format: AssistantKeyVectors.LastUsedFile.format, version: 2,
      description:
        "Assistant last-used file, version 2 (docs/formats/last-used.md). Read each case's 'file' (hex) with "
        + "'integrity_key': 'result'/'last_used'/'damage' is the full read's outcome (list); 'search' is what "
        + "verify's search for 'search_id' finds.",
      integrityKey: Hex.encode([UInt8](0..<32)), tests: tests)
  }
}

@Suite struct LastUsedV2VectorGenerationTests {
  /// `make vectors` (TASKKEY_WRITE_VECTORS=1) rewrites the file; otherwise
  /// the checked-in file must equal what the generator makes now.
  @Test func checkedInVectorsMatchTheGenerator() throws {
    #expect(
      try CommittedVectors.drifted(json: LastUsedV2VectorGenerator.makeFile(), name: "assistant-last-used-v2.json")
        .isEmpty,
      "Vectors/assistant-last-used-v2.json drifted from the generator; run 'make vectors'")
  }

  /// The public checker passes every stored case, fails a wrong one, and
  /// the cases cover every outcome.
  @Test func everyStoredVectorGivesItsStatedOutcome() throws {
    let url = CommittedVectors.directory.appendingPathComponent("assistant-last-used-v2.json")
    let data = try Data(contentsOf: url)
    let report = try #require(AssistantKeyVectors.check(data))
    #expect(report.failures == [])
    var file = try JSONDecoder().decode(AssistantKeyVectors.LastUsedFileV2.self, from: data)
    #expect(report.cases == file.tests.count)
    #expect(Set(file.tests.compactMap(\.search)) == ["used", "never", "absent", "refused"])
    #expect(
      Set(file.tests.compactMap(\.damage)) == ["authentication_failed", "malformed", "unsupported_version"])
    file.tests[0].searchTime = 1
    file.tests[5].damage = "malformed"
    let broken = try #require(AssistantKeyVectors.check(try JSONEncoder().encode(file)))
    #expect(broken.failures.count == 2)
  }
}
