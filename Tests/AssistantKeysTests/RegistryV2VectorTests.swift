import Foundation
import TaskCrypto
import TaskKeyTestSupport
import Testing

@testable import AssistantKeys
@testable import TaskKeyVectors

/// The deterministic generator of Vectors/assistant-registry-v2.json: the
/// keys and registry of the version-1 file, written as version 2, and
/// damaged variants, each outcome computed by the real reader (and
/// re-derived by scripts/check_assistant_vectors.py from the spec alone).
enum RegistryV2VectorGenerator {
  typealias File = AssistantKeyVectors.RegistryFileV2
  typealias V2 = RegistryFormatV2

  static let now: Int64 = 1_800_000_200
  /// The file id of the vectors' registry (a writer draws a random one).
  static let fileID = [UInt8](0xa0..<0xb0)
  /// The file id of a second file of the same generation.
  static let otherFileID = [UInt8](0xb0..<0xc0)

  static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

  static func key(_ bytes: [UInt8]) throws -> SymmetricKey {
    try bytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
  }

  /// The four keys of the version-1 vectors (active with an expiry,
  /// revoked, in an overlap window, expired), generation 7.
  static func contents(_ valid: [(comment: String, random: [UInt8], key: AssistantKey)]) -> RegistryFormat.Contents {
    let start: Int64 = 1_800_000_000
    func entry(
      _ index: Int, created: Int64, expires: Int64?, revocation: RegistryEntry.Revocation, trust: TrustLevel,
      name: String, grants: [String]
    ) -> RegistryEntry {
      let key = valid[index].key
      return RegistryEntry(
        id: key.id, digest: key.digest, created: created, expires: expires, revocation: revocation, trust: trust,
        name: name, grants: grants)
    }
    return RegistryFormat.Contents(
      generation: 7,
      entries: [
        entry(
          4, created: start + 100, expires: start + 86_500, revocation: .none, trust: .standard, name: "alpha",
          grants: ["notes:read", "notes:write"]),
        entry(
          5, created: start, expires: nil, revocation: .revoked(start + 100), trust: .restricted, name: "beta",
          grants: []),
        entry(
          6, created: start, expires: nil, revocation: .until(start + 3_700), trust: .standard, name: "alpha",
          grants: ["notes:read", "notes:write"]),
        entry(
          7, created: start, expires: start + 150, revocation: .none, trust: .elevated, name: "gamma",
          grants: ["vault:read"]),
      ])
  }

  static func bigEndian(_ value: UInt64, _ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (count - 1 - $0))) }
  }

  /// `bytes` with `field` at `offset` and the header MAC recomputed under
  /// `key`: only the field checks can refuse it.
  static func resealed(_ bytes: [UInt8], at offset: Int, with field: [UInt8], key: SymmetricKey) -> [UInt8] {
    var edited = bytes
    edited.replaceSubrange(offset..<(offset + field.count), with: field)
    var mac = HMACSHA256(key: key)
    mac.update(data: V2.headerLabel)
    mac.update(data: Array(edited[0..<V2.macOffset]))
    edited.replaceSubrange(V2.macOffset..<V2.headerByteCount, with: mac.finalize())
    return edited
  }

  /// Replaces the first occurrence of `original` by `replacement` (same length).
  static func replacing(_ bytes: [UInt8], _ original: String, _ replacement: String) -> [UInt8] {
    let from = Array(original.utf8)
    let start = bytes.indices.first { bytes[$0...].starts(with: from) }!
    var edited = bytes
    edited.replaceSubrange(start..<(start + from.count), with: Array(replacement.utf8))
    return edited
  }

  static func makeFile() throws -> File {
    let valid = try AssistantKeyVectorGenerator.validKeys()
    let integrityKey = try key([UInt8](0..<32))
    let otherKey = try key((0..<32).map { UInt8(0xff - $0) })
    let contents = contents(valid)
    let registry = V2.encode(contents, key: integrityKey, fileID: fileID)
    let sorted = contents.entries.sorted { $0.digest.bytes.lexicographicallyPrecedes($1.digest.bytes) }
    let position = { (index: Int) in sorted.firstIndex { $0.digest == valid[index].key.digest }! }
    let entryStart = { (index: Int) in V2.headerByteCount + V2.entryByteCount * position(index) }

    var tests = [File.Test]()
    func add(_ comment: String, key index: Int, registry edited: [UInt8]? = nil, anchor: UInt64? = nil) {
      let text = valid[index].key.testString
      let (result, error, damage, identity, list) = AssistantKeyVectors.registryV2Outcome(
        key: text, registry: edited ?? registry, anchor: anchor, integrityKey: integrityKey, now: now)
      tests.append(
        File.Test(
          id: tests.count + 1, comment: comment, key: text, registry: edited.map(hex), anchor: anchor, result: result,
          publicID: identity?.id.text, name: identity?.name, trust: identity?.trust.rawValue, grants: identity?.grants,
          expires: identity?.expires.map { Int64($0.timeIntervalSince1970) }, error: error, damage: damage, list: list))
    }
    add("an active key with an expiry", key: 4)
    add("a revoked key", key: 5)
    add("the old key of a rotation, inside its overlap window (ends at 1800003700)", key: 6)
    add("an expired key", key: 7)
    add("a well-formed key that is not registered", key: 0)

    // The header.
    var flipped = registry
    flipped[V2.macOffset] ^= 0x01
    add("a header MAC byte changed", key: 4, registry: flipped)
    var generation = registry
    generation[41] ^= 0x01
    add("the generation changed, header MAC unchanged", key: 4, registry: generation)
    let foreign = resealed(registry, at: 34, with: bigEndian(7, 8), key: otherKey)
    add("the right header with a header MAC under another key", key: 4, registry: foreign)
    add("version line v3", key: 4, registry: replacing(registry, "registry v2\n", "registry v3\n"))
    add("cut to 125 bytes", key: 4, registry: Array(registry[0..<125]))
    add("the last byte cut off", key: 4, registry: Array(registry.dropLast()))
    add("one byte appended", key: 4, registry: registry + [0x0a])
    add(
      "generation 0, re-authenticated", key: 4,
      registry: resealed(registry, at: 34, with: bigEndian(0, 8), key: integrityKey))
    add(
      "count 1,000,001, re-authenticated", key: 4,
      registry: resealed(registry, at: 42, with: bigEndian(1_000_001, 4), key: integrityKey))
    add(
      "index offset 127, re-authenticated", key: 4,
      registry: resealed(registry, at: 46, with: bigEndian(127, 8), key: integrityKey))
    add("the vault remembers generation 8", key: 4, anchor: 8)
    add("the vault remembers generation 7", key: 4, anchor: 7)

    // Records.
    add(
      "the active key's record: trust raised, MAC unchanged", key: 4,
      registry: replacing(registry, " standard alpha", " elevated alpha"))
    let betaEdited = replacing(registry, " restricted beta", " restricteD beta")
    add("another key's record changed: verify does not read it, list refuses", key: 4, registry: betaEdited)
    add("the changed record's own key", key: 5, registry: betaEdited)
    var older = contents
    older.generation = 6
    let recordsOffset = V2.headerByteCount + V2.entryByteCount * 4
    let mixed =
      Array(registry[0..<recordsOffset]) + Array(V2.encode(older, key: integrityKey, fileID: fileID)[recordsOffset...])
    add("every record from generation 6 under the generation-7 header", key: 4, registry: mixed)
    // A second authentic file of generation 7 (another file id) in which
    // the active key is elevated: its record (same length, same offset)
    // under this file's header and index.
    var raised = contents
    raised.entries[0].trust = .elevated
    let secondFile = V2.encode(raised, key: integrityKey, fileID: otherFileID)
    let activeOffset = Int(V2.integer(registry, at: entryStart(4) + 32, count: 8))
    let activeLength = Int(V2.integer(registry, at: entryStart(4) + 40, count: 4))
    var spliced = registry
    spliced.replaceSubrange(
      activeOffset..<(activeOffset + activeLength), with: secondFile[activeOffset..<(activeOffset + activeLength)])
    precondition(spliced != registry)
    add(
      "the active key's record from another authentic file of generation 7 (trust elevated)", key: 4,
      registry: spliced)

    // The index (not authenticated).
    func entryReplaced(_ index: Int, by other: Int) -> [UInt8] {
      var edited = registry
      let (to, from) = (entryStart(index), entryStart(other))
      edited.replaceSubrange(to..<(to + 44), with: registry[from..<(from + 44)])
      return edited
    }
    let neighbour = { (index: Int) in sorted[position(index) == 0 ? 1 : position(index) - 1].digest }
    let neighbourIndex = { (index: Int) in (4...7).first { valid[$0].key.digest == neighbour(index) }! }
    add(
      "the revoked key's index entry replaced by a copy of its neighbour's", key: 5,
      registry: entryReplaced(5, by: neighbourIndex(5)))
    var pointed = registry
    let other = entryStart(neighbourIndex(4))
    pointed.replaceSubrange((entryStart(4) + 32)..<(entryStart(4) + 44), with: registry[(other + 32)..<(other + 44)])
    add("the active key's index entry points at another key's record", key: 4, registry: pointed)
    var outside = registry
    outside.replaceSubrange((entryStart(4) + 32)..<(entryStart(4) + 40), with: bigEndian(UInt64(registry.count), 8))
    add("the active key's index entry points past the end", key: 4, registry: outside)
    var swapped = registry
    let (first, second) = (V2.headerByteCount, V2.headerByteCount + 44)
    swapped.replaceSubrange(first..<(first + 32), with: registry[second..<(second + 32)])
    swapped.replaceSubrange(second..<(second + 32), with: registry[first..<(first + 32)])
    add("the first two index digests swapped", key: 4, registry: swapped)

    // Re-authenticated records that only the grammar catches.
    func reMACed(_ index: Int, _ body: String) -> [UInt8] {
      let bytes = Array(body.utf8)
      var mac = HMACSHA256(key: integrityKey)
      mac.update(data: V2.recordLabel)
      mac.update(data: bigEndian(7, 8))
      mac.update(data: fileID)
      mac.update(data: bytes)
      let record = bytes + mac.finalize()
      let start = entryStart(index)
      let offset = Int(V2.integer(registry, at: start + 32, count: 8))
      let length = Int(V2.integer(registry, at: start + 40, count: 4))
      precondition(record.count == length)
      var edited = registry
      edited.replaceSubrange(offset..<(offset + length), with: record)
      return edited
    }
    let alpha = RegistryFormat.line(for: contents.entries[0])
    add(
      "a time with a leading zero for a space, re-authenticated", key: 4,
      registry: reMACed(4, alpha.replacingOccurrences(of: " 1800000100 ", with: " 01800000100")))
    add(
      "an unknown trust level, re-authenticated", key: 4,
      registry: reMACed(4, alpha.replacingOccurrences(of: " standard ", with: " stand4rd ")))
    add(
      "the version-1 file of the same keys is still read", key: 4,
      registry: RegistryFormat.encode(contents, key: integrityKey))
    add(
      "the second file of generation 7, whole, is authentic (the rollback left to the anchor)", key: 4,
      registry: secondFile)

    return File(
      format: AssistantKeyVectors.RegistryFile.format, version: 2,
      description:
        "Assistant key registry, version 2 (docs/formats/registry.md). Present each case's 'key' at time 'now' to the case's 'registry' (hex; else the file's), authenticated with 'integrity_key', with the vault remembering 'anchor' (else nothing): 'result'/'error'/'damage' is verify's outcome, 'list' a full read's.",
      integrityKey: hex([UInt8](0..<32)), now: now, registry: hex(registry), tests: tests)
  }
}

@Suite struct RegistryV2VectorGenerationTests {
  /// `make vectors` (TASKKEY_WRITE_VECTORS=1) rewrites the file; otherwise
  /// the checked-in file must equal what the generator makes now.
  @Test func checkedInVectorsMatchTheGenerator() throws {
    #expect(
      try CommittedVectors.drifted(json: RegistryV2VectorGenerator.makeFile(), name: "assistant-registry-v2.json")
        .isEmpty,
      "Vectors/assistant-registry-v2.json drifted from the generator; run 'make vectors'")
  }

  /// The public checker passes every stored case, and the cases cover
  /// every outcome a version-2 reader can give.
  @Test func everyStoredVectorGivesItsStatedOutcome() throws {
    let url = CommittedVectors.directory.appendingPathComponent("assistant-registry-v2.json")
    let data = try Data(contentsOf: url)
    let report = try #require(AssistantKeyVectors.check(data))
    #expect(report.failures == [])
    let file = try JSONDecoder().decode(AssistantKeyVectors.RegistryFileV2.self, from: data)
    #expect(report.cases == file.tests.count)
    #expect(Set(file.tests.compactMap(\.error)) == ["unknown_key", "revoked", "expired", "registry_damaged"])
    #expect(
      Set(file.tests.compactMap(\.damage)) == [
        "authentication_failed", "malformed", "unsupported_version", "rolled_back",
      ])
    #expect(
      Set(file.tests.map(\.list)) == [
        "valid", "authentication_failed", "malformed", "unsupported_version", "rolled_back",
      ])
    // A damaged record that verify does not read, and the list that does.
    #expect(file.tests.contains { $0.result == "valid" && $0.list == "authentication_failed" })
  }
}
