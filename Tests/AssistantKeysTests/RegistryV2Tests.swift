import Foundation
import TaskCrypto
import Testing

@testable import AssistantKeys

/// The version-2 registry (docs/formats/registry.md): round trips, the
/// binary search, every rejection of verify's and the full read's steps,
/// and the migration from version 1.
@Suite struct RegistryV2Tests {
  typealias V2 = RegistryFormatV2

  static let key = try! [UInt8](0..<32).withUnsafeBytes { try SymmetricKey(copying: $0) }

  /// `count` entries with digests SHA-256("entry <n>"), varied fields.
  static func contents(_ count: Int, generation: UInt64 = 5) -> RegistryFormat.Contents {
    let entries = (0..<count).map { index -> RegistryEntry in
      let digest = SHA256.hash(data: Array("entry \(index)".utf8))
      let revocation: RegistryEntry.Revocation = index % 3 == 1 ? .revoked(1_800_000_000 + Int64(index)) : .none
      return RegistryEntry(
        id: AssistantKeyID(digest: digest), digest: digest, created: 1_700_000_000 + Int64(index),
        expires: index % 4 == 2 ? 1_900_000_000 : nil, revocation: revocation, trust: .standard,
        name: "agent-\(index)", grants: index % 2 == 0 ? ["notes:read", "vault:read"] : [])
    }
    return RegistryFormat.Contents(generation: generation, entries: entries)
  }

  /// The entries in the order a writer stores them (by digest).
  static func sorted(_ contents: RegistryFormat.Contents) -> [RegistryEntry] {
    contents.entries.sorted { $0.digest.bytes.lexicographicallyPrecedes($1.digest.bytes) }
  }

  /// The rejection `body` threw, or nil.
  func damage(_ body: () throws -> Void) -> AssistantKeyError? { assistantError(body) }

  /// Rewrites header field bytes at `offset` and re-MACs the header under
  /// the right key, so that only the field checks can reject it.
  static func resealed(_ bytes: [UInt8], at offset: Int, with field: [UInt8]) -> [UInt8] {
    var edited = bytes
    edited.replaceSubrange(offset..<(offset + field.count), with: field)
    var mac = HMACSHA256(key: key)
    mac.update(data: V2.headerLabel)
    mac.update(data: Array(edited[0..<V2.macOffset]))
    edited.replaceSubrange(V2.macOffset..<V2.headerByteCount, with: mac.finalize())
    return edited
  }

  static func bigEndian(_ value: UInt64, _ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (count - 1 - $0))) }
  }

  func lookup(_ digest: SHA256Digest, _ bytes: [UInt8]) throws -> RegistryEntry? {
    try RegistryReading.lookup(digest, in: bytes, key: Self.key)
  }

  @Test(arguments: [0, 1, 2, 7, 100])
  func encodeThenDecodeGivesTheSameKeysSortedByDigest(count: Int) throws {
    let contents = Self.contents(count)
    let bytes = V2.encode(contents, key: Self.key)
    let decoded = try RegistryReading.decode(bytes, key: Self.key)
    #expect(decoded == RegistryFormat.Contents(generation: 5, entries: Self.sorted(contents)))
    let fileID = Array(bytes[V2.fileIDOffset..<V2.macOffset])
    #expect(V2.encode(decoded, key: Self.key, fileID: fileID) == bytes)
    #expect(
      bytes.count == V2.headerByteCount + 44 * count + Self.sorted(contents).reduce(0) { $0 + $1.lineLength + 32 })
  }

  /// First, last, middle and absent at several sizes, each search reading
  /// at most ⌈log2(count + 1)⌉ index entries and one record.
  @Test(arguments: [1, 2, 3, 8, 65, 1_000])
  func binarySearchFindsFirstLastMiddleAndAbsent(count: Int) throws {
    let contents = Self.contents(count)
    let bytes = V2.encode(contents, key: Self.key)
    let sorted = Self.sorted(contents)
    var reads = 0
    let source = RegistrySource(size: bytes.count) { offset, length in
      if length == V2.entryByteCount { reads += 1 }
      return Array(bytes[offset..<(offset + length)])
    }
    let header = try V2.openHeader(source, key: Self.key, floor: 0)
    let bound = Int.bitWidth - count.leadingZeroBitCount  // ⌈log2(count + 1)⌉
    for wanted in Set([0, count / 2, count - 1]).map({ sorted[$0] }) {
      reads = 0
      #expect(try V2.lookup(wanted.digest, in: source, header: header, key: Self.key) == wanted)
      #expect(reads <= bound)
    }
    for absent in ["absent", "entry \(count)"] {
      reads = 0
      #expect(try V2.lookup(SHA256.hash(data: Array(absent.utf8)), in: source, header: header, key: Self.key) == nil)
      #expect(reads <= bound)
    }
    // Below the first digest and above the last.
    let low = SHA256Digest(bytes: [UInt8](repeating: 0, count: 32))!
    let high = SHA256Digest(bytes: [UInt8](repeating: 0xff, count: 32))!
    #expect(try V2.lookup(low, in: source, header: header, key: Self.key) == nil)
    #expect(try V2.lookup(high, in: source, header: header, key: Self.key) == nil)
  }

  @Test func headerRejectionsInTheirOrder() throws {
    let contents = Self.contents(3)
    let bytes = V2.encode(contents, key: Self.key)
    let digest = Self.sorted(contents)[1].digest
    let malformed: (AssistantKeyError?) -> Bool = {
      if case .registryDamaged(.malformed)? = $0 { return true }
      return false
    }
    // Step 1: the size limit, before anything is read.
    let huge = RegistrySource(size: V2.maximumFileByteCount + 1) { _, _ in
      Issue.record("read")
      return []
    }
    #expect(
      damage { _ = try RegistryReading.open(huge, key: Self.key, floor: 0, full: false) }
        == .registryDamaged(.tooLarge(byteCount: V2.maximumFileByteCount + 1, limit: V2.maximumFileByteCount)))
    // Step 3: a version line with no header after it.
    #expect(malformed(damage { _ = try lookup(digest, Array(bytes[0..<(V2.headerByteCount - 1)])) }))
    #expect(malformed(damage { _ = try lookup(digest, V2.versionLine) }))
    // Step 4: any header byte changed without the key.
    // The file id (78..<94) and the MAC (94..<126) included.
    for offset in [34, 41, 45, 60, 77, 78, 93, 94, 125] {
      var edited = bytes
      edited[offset] ^= 0x01
      #expect(damage { _ = try lookup(digest, edited) } == .registryDamaged(.authenticationFailed))
    }
    // Step 5, under the right key: generation 0, a count above the cap,
    // a layout that differs from the table.
    #expect(malformed(damage { _ = try lookup(digest, Self.resealed(bytes, at: 34, with: Self.bigEndian(0, 8))) }))
    let aboveCap = Self.resealed(bytes, at: 42, with: Self.bigEndian(1_000_001, 4))
    #expect(
      damage { _ = try lookup(digest, aboveCap) }
        == .registryDamaged(.malformed(line: 0, reason: "more than 1000000 keys")))
    for (offset, value) in [(46, 127), (54, 44 * 2), (62, 126), (70, 1)] {
      #expect(
        malformed(
          damage { _ = try lookup(digest, Self.resealed(bytes, at: offset, with: Self.bigEndian(UInt64(value), 8))) }))
    }
    // Truncated or extended files: the records length no longer matches.
    for edited in [Array(bytes.dropLast()), Array(bytes[0..<200]), bytes + [0]] {
      #expect(malformed(damage { _ = try lookup(digest, edited) }))
    }
    // Step 6: generation 5 below a remembered 6.
    #expect(
      damage { _ = try RegistryReading.open(RegistrySource(bytes), key: Self.key, floor: 6, full: false) }
        == .registryDamaged(.rolledBack(found: 5, expected: 6)))
    // The wrong key fails the header MAC.
    let other = try SymmetricKey.generate()
    #expect(
      damage { _ = try RegistryReading.lookup(digest, in: bytes, key: other) }
        == .registryDamaged(.authenticationFailed))
  }

  @Test func aRecordFromAnOlderGenerationIsRefused() throws {
    let contents = Self.contents(4)
    let current = V2.encode(contents, key: Self.key)
    var older = contents
    older.generation = 4
    let old = V2.encode(older, key: Self.key)
    // Same layout: swap in the older file's records under the newer header.
    let recordsOffset = V2.headerByteCount + 44 * 4
    let mixed = Array(current[0..<recordsOffset]) + Array(old[recordsOffset...])
    for entry in Self.sorted(contents) {
      #expect(damage { _ = try lookup(entry.digest, mixed) } == .registryDamaged(.authenticationFailed))
    }
    #expect(damage { _ = try RegistryReading.decode(mixed, key: Self.key) } == .registryDamaged(.authenticationFailed))
  }

  /// Two authentic files of one generation (a write whose anchor update
  /// was lost, then the older file put back and written again): a record
  /// of one under the other's header is refused, so no file that no
  /// writer produced can be assembled from their records.
  @Test func aRecordFromAnotherFileOfTheSameGenerationIsRefused() throws {
    let first = Self.contents(4)
    var second = first
    for index in second.entries.indices { second.entries[index].trust = .elevated }  // same record lengths
    let firstBytes = V2.encode(first, key: Self.key)
    let secondBytes = V2.encode(second, key: Self.key)
    #expect(firstBytes.count == secondBytes.count)
    #expect(firstBytes[V2.fileIDOffset..<V2.macOffset] != secondBytes[V2.fileIDOffset..<V2.macOffset])
    let sorted = Self.sorted(first)
    let entryStart = V2.headerByteCount
    let offset = Int(V2.integer(firstBytes, at: entryStart + 32, count: 8))
    let length = Int(V2.integer(firstBytes, at: entryStart + 40, count: 4))
    var mixed = firstBytes
    mixed.replaceSubrange(offset..<(offset + length), with: secondBytes[offset..<(offset + length)])
    #expect(mixed != firstBytes)
    #expect(damage { _ = try lookup(sorted[0].digest, mixed) } == .registryDamaged(.authenticationFailed))
    #expect(try lookup(sorted[1].digest, mixed) == sorted[1])
    #expect(damage { _ = try RegistryReading.decode(mixed, key: Self.key) } == .registryDamaged(.authenticationFailed))
    // Each file alone is authentic, and a write never reuses a file id.
    #expect(try lookup(sorted[0].digest, secondBytes)?.trust == .elevated)
    #expect(V2.encode(first, key: Self.key) != firstBytes)
  }

  @Test func anIndexEntryPointingAtAnotherKeysRecordIsRefused() throws {
    let contents = Self.contents(4)
    let bytes = V2.encode(contents, key: Self.key)
    let sorted = Self.sorted(contents)
    // Entry 0 takes entry 1's offset and length: the record is authentic
    // but for another digest.
    var edited = bytes
    let start = V2.headerByteCount
    edited.replaceSubrange(start + 32..<(start + 44), with: bytes[(start + 44 + 32)..<(start + 88)])
    #expect(
      damage { _ = try lookup(sorted[0].digest, edited) }
        == .registryDamaged(.malformed(line: 0, reason: "an index entry points at another key's record")))
    #expect(try lookup(sorted[1].digest, edited) == sorted[1])
    guard case .registryDamaged(.malformed)? = damage({ _ = try RegistryReading.decode(edited, key: Self.key) }) else {
      Issue.record("a full read accepted a moved record")
      return
    }
  }

  /// Deleting a revoked key's index entry (count unchanged, so the search
  /// reads a neighbour twice) turns `revoked` into `unknown_key`, never
  /// into a success; an index entry out of bounds is `malformed`.
  @Test func indexEditsOnlyMakeKeysUnknownOrRefused() throws {
    let contents = Self.contents(3)
    let bytes = V2.encode(contents, key: Self.key)
    let sorted = Self.sorted(contents)
    for (position, entry) in sorted.enumerated() {
      var edited = bytes
      let neighbour = position == 0 ? 1 : position - 1
      edited.replaceSubrange(
        (V2.headerByteCount + 44 * position)..<(V2.headerByteCount + 44 * (position + 1)),
        with: bytes[(V2.headerByteCount + 44 * neighbour)..<(V2.headerByteCount + 44 * (neighbour + 1))])
      #expect(try lookup(entry.digest, edited) == nil)
      #expect(damage { _ = try RegistryReading.decode(edited, key: Self.key) } != nil)
    }
    var outOfBounds = bytes
    let middle = V2.headerByteCount + 44 * 1
    outOfBounds.replaceSubrange((middle + 32)..<(middle + 40), with: Self.bigEndian(UInt64(bytes.count), 8))
    #expect(
      damage { _ = try lookup(sorted[1].digest, outOfBounds) }
        == .registryDamaged(.malformed(line: 0, reason: "index entry 1 points outside the records")))
  }

  /// Every byte of a record changed without the key refuses that key;
  /// every byte flip anywhere refuses the full read.
  @Test func everyByteFlipRefusesTheFullReadAndNeverChangesAVerdict() throws {
    let contents = Self.contents(3)
    let bytes = V2.encode(contents, key: Self.key)
    let sorted = Self.sorted(contents)
    for index in bytes.indices {
      var edited = bytes
      edited[index] ^= 0x01
      guard case .registryDamaged? = damage({ _ = try RegistryReading.decode(edited, key: Self.key) }) else {
        Issue.record("a full read accepted a flip at byte \(index)")
        return
      }
      for entry in sorted {
        // Either refused, unknown, or exactly the authentic entry.
        if let found = try? lookup(entry.digest, edited), found != entry {
          Issue.record("flip at byte \(index) changed the entry of \(entry.id)")
        }
      }
    }
  }

  @Test func authenticButNonCanonicalRecordsAreRefused() throws {
    var contents = Self.contents(1)
    let entry = contents.entries[0]
    let bytes = V2.encode(contents, key: Self.key)
    // Re-MAC a record whose body spells a time with a leading zero.
    let body = Array(
      RegistryFormat.line(for: entry).replacingOccurrences(of: " 1700000000 ", with: " 01700000000 ").utf8)
    var mac = HMACSHA256(key: Self.key)
    mac.update(data: V2.recordLabel)
    mac.update(data: Self.bigEndian(5, 8))
    mac.update(data: Array(bytes[V2.fileIDOffset..<V2.macOffset]))
    mac.update(data: body)
    let record = body + mac.finalize()
    let start = V2.headerByteCount
    var edited = Array(bytes[0..<(start + 44)]) + record
    edited.replaceSubrange((start + 40)..<(start + 44), with: Self.bigEndian(UInt64(record.count), 4))
    edited = Self.resealed(edited, at: 70, with: Self.bigEndian(UInt64(record.count), 8))
    #expect(
      damage { _ = try lookup(entry.digest, edited) }
        == .registryDamaged(.malformed(line: 0, reason: "a record is not a canonical key line")))
    contents.entries = []
    #expect(try RegistryReading.decode(V2.encode(contents, key: Self.key), key: Self.key).entries.isEmpty)
  }

  @Test func fullReadRefusesAnUnsortedIndex() throws {
    let contents = Self.contents(3)
    let bytes = V2.encode(contents, key: Self.key)
    // Swap the digests of entries 0 and 1 (their records stay put).
    var edited = bytes
    let (first, second) = (V2.headerByteCount, V2.headerByteCount + 44)
    edited.replaceSubrange(first..<(first + 32), with: bytes[second..<(second + 32)])
    edited.replaceSubrange(second..<(second + 32), with: bytes[first..<(first + 32)])
    #expect(
      damage { _ = try RegistryReading.decode(edited, key: Self.key) }
        == .registryDamaged(.malformed(line: 0, reason: "index entry 1: digests are not strictly ascending")))
  }

  /// A version-1 file is read by verify and list, and the next write
  /// replaces it with version 2 at the next generation, every key kept.
  @Test func aVersion1RegistryIsReadThenMigratedByTheNextWrite() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let kept = try registry.mint(name: "kept", grants: ["notes:read"])
    let revoked = try registry.mint(name: "gone")
    try registry.revoke(revoked.key.id)
    try fixture.downgradeToVersion1()
    #expect(try fixture.registryText().hasPrefix("taskkey assistant-key registry v1\ngeneration 3\n"))
    let old = try fixture.open()
    #expect(try old.verify(kept.key.testString).grants == ["notes:read"])
    #expect(assistantError { _ = try old.verify(revoked.key.testString) } == .revoked(revoked.key.id))
    #expect(Set(try old.keys().map(\.name)) == ["kept", "gone"])
    let added = try old.mint(name: "added")
    let bytes = try fixture.registryBytes()
    #expect(RegistryFormatV2.isVersion2(bytes))
    let contents = try RegistryReading.decode(bytes, key: fixture.key)
    #expect(contents.generation == 4)
    #expect(Set(contents.entries.map(\.name)) == ["kept", "gone", "added"])
    let fresh = try fixture.open()
    #expect(try fresh.verify(added.key.testString).name == "added")
    #expect(try fresh.verify(kept.key.testString).name == "kept")
    #expect(assistantError { _ = try fresh.verify(revoked.key.testString) } == .revoked(revoked.key.id))
  }

  /// Opening reads the header; a verify searches once per key and then
  /// answers from its cache while the file is unchanged.
  @Test func openingReadsTheHeaderAndVerifySearchesOncePerKey() throws {
    let fixture = try RegistryFixture()
    let writer = try fixture.open()
    let minted = try writer.mint(name: "real")
    try writer.addRandomEntriesForTesting(count: 2_000)
    let reader = try fixture.open()
    #expect(reader.snapshot.index == nil)
    #expect(reader.snapshot.header?.count == 2_001)
    for _ in 0..<100 { _ = try reader.verify(minted.key.testString) }
    #expect(reader.loadCount == 1)
    #expect(reader.snapshot.found.count == 1)
    try writer.revoke(minted.key.id)
    #expect(assistantError { _ = try reader.verify(minted.key.testString) } == .revoked(minted.key.id))
    #expect(reader.loadCount == 2)
  }

  /// The last-used file's limit, raised with the registry's: a line for
  /// each of 10^6 keys fits, one byte more than 48 MiB does not.
  @Test func lastUsedFileAboveFortyEightMebibytesIsRefused() throws {
    let limit = 48 << 20
    #expect(LastUsedFormat.maximumFileByteCount == limit)
    #expect(41 + 1_000_000 * 41 + 49 < limit)
    #expect(
      damage { _ = try LastUsedFormat.decode([UInt8](repeating: 0x20, count: limit + 1), key: Self.key) }
        == .registryDamaged(.tooLarge(byteCount: limit + 1, limit: limit)))
  }
}

extension RegistryEntry {
  /// The length of the key line, the record's body.
  var lineLength: Int { RegistryFormat.line(for: self).utf8.count }
}
