import Foundation
import TaskCrypto
import Testing

@testable import AssistantKeys

/// The last-used file, version 2 (docs/formats/last-used.md): rebuilt by
/// registry writes, one slot rewritten in place by a verify, torn or
/// forged slots read as never used, and the file stays valid under
/// concurrent verifies.
@Suite struct LastUsedV2Tests {
  typealias V2 = LastUsedFormatV2

  static let key = try! [UInt8](0..<32).withUnsafeBytes { try SymmetricKey(copying: $0) }

  func bytes(_ fixture: RegistryFixture) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: fixture.lastUsedPath)))
  }

  func write(_ bytes: [UInt8], _ fixture: RegistryFixture) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: fixture.lastUsedPath))
  }

  /// The byte offset of `id`'s slot in `file`.
  func slotOffset(_ id: AssistantKeyID, in file: [UInt8], key: SymmetricKey) throws -> Int {
    let count = try V2.header(file, size: file.count, key: key)
    let found = try #require(try V2.find(V2.idValue(id), in: RegistrySource(file), count: count))
    return V2.headerByteCount + V2.slotByteCount * found.index
  }

  @Test func idBytesRoundTripAndSortLikeTheText() throws {
    let ids = (0..<200).map { AssistantKeyID(digest: SHA256.hash(data: Array("id \($0)".utf8))) }
    for id in ids { #expect(V2.id(V2.idValue(id)) == id) }
    #expect(ids.sorted().map(V2.idValue) == ids.map(V2.idValue).sorted())
  }

  /// Every write leaves a slot per key; a verify changes 40 bytes of its
  /// key's slot in the same file (same inode and size), and `list` reads it.
  @Test func aWriteMakesASlotPerKeyAndAVerifyRewritesOneSlotInPlace() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "a")
    try registry.addRandomEntriesForTesting(count: 50)
    let before = try bytes(fixture)
    #expect(V2.isVersion2(before))
    #expect(before.count == V2.headerByteCount + V2.slotByteCount * 51)
    #expect(try V2.decode(before, key: fixture.key).isEmpty)
    let inode = try FileManager.default.attributesOfItem(atPath: fixture.lastUsedPath)[.systemFileNumber] as? Int
    _ = try fixture.open().verify(minted.key.testString)
    let after = try bytes(fixture)
    let offset = try slotOffset(minted.key.id, in: after, key: fixture.key)
    let changed = after.indices.filter { after[$0] != before[$0] }
    #expect(changed.allSatisfy { (offset + 8)..<(offset + V2.slotByteCount) ~= $0 })
    #expect(!changed.isEmpty)
    #expect(try FileManager.default.attributesOfItem(atPath: fixture.lastUsedPath)[.systemFileNumber] as? Int == inode)
    let now = Int64(fixture.clock.now.timeIntervalSince1970)
    #expect(try V2.decode(after, key: fixture.key) == [minted.key.id: now])
    #expect(try registry.keys().first { $0.id == minted.key.id }?.lastUsed == fixture.clock.now)
    // The next write carries the time over.
    fixture.clock.advance(seconds: 5)
    let other = try registry.mint(name: "b")
    #expect(try V2.decode(try bytes(fixture), key: fixture.key) == [minted.key.id: now])
    #expect(try bytes(fixture).count == V2.headerByteCount + V2.slotByteCount * 52)
    _ = try fixture.open().verify(other.key.testString)
    #expect(try V2.decode(try bytes(fixture), key: fixture.key) == [minted.key.id: now, other.key.id: now + 5])
  }

  /// A slot torn by a crash (half its new bytes) fails its MAC: that key
  /// reads as never used, the others keep their times, the next verify of
  /// that key writes it again.
  @Test func aTornSlotReadsAsNeverUsedAndIsRewrittenByTheNextUse() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let first = try registry.mint(name: "a")
    let second = try registry.mint(name: "b")
    _ = try fixture.open().verify(first.key.testString)
    _ = try fixture.open().verify(second.key.testString)
    let used = Int64(fixture.clock.now.timeIntervalSince1970)
    var file = try bytes(fixture)
    let offset = try slotOffset(first.key.id, in: file, key: fixture.key)
    let newer = V2.stamp(id: V2.idValue(first.key.id), time: UInt64(used + 120), keyed: HMACSHA256(key: fixture.key))
    file.replaceSubrange((offset + 8)..<(offset + 28), with: newer[0..<20])
    try write(file, fixture)
    #expect(try V2.decode(file, key: fixture.key) == [second.key.id: used])
    let records = try registry.keys()
    #expect(records.first { $0.id == first.key.id }?.lastUsed == nil)
    #expect(records.first { $0.id == second.key.id }?.lastUsed == fixture.clock.now)
    // A rebuild copies the torn slot verbatim: still never used.
    _ = try registry.mint(name: "c")
    #expect(try V2.decode(try bytes(fixture), key: fixture.key) == [second.key.id: used])
    _ = try fixture.open().verify(first.key.testString)
    #expect(try V2.decode(try bytes(fixture), key: fixture.key) == [first.key.id: used, second.key.id: used])
  }

  /// A file without the key's slot (its rebuild failed, or an edit):
  /// verify succeeds and writes nothing; the next registry write adds it.
  @Test func aKeyWithoutASlotIsNotRecordedUntilTheNextWrite() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "a")
    let empty = V2.encode([], key: fixture.key)
    try write(empty, fixture)
    #expect(try fixture.open().verify(minted.key.testString).name == "a")
    #expect(try bytes(fixture) == empty)
    _ = try registry.mint(name: "b")
    #expect(try bytes(fixture).count == V2.headerByteCount + 2 * V2.slotByteCount)
    _ = try fixture.open().verify(minted.key.testString)
    #expect(try registry.keys().first { $0.id == minted.key.id }?.lastUsed == fixture.clock.now)
  }

  /// A version-1 file is read by `list`, still updated whole by verify,
  /// and replaced by version 2 at the next registry write, times kept.
  @Test func aVersion1FileIsReadThenMigratedByTheNextWrite() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "a")
    try write(LastUsedFormat.encode([minted.key.id: 1_700_000_000], key: fixture.key), fixture)
    #expect(try registry.keys().first?.lastUsed == Date(timeIntervalSince1970: 1_700_000_000))
    _ = try fixture.open().verify(minted.key.testString)
    let now = Int64(fixture.clock.now.timeIntervalSince1970)
    #expect(try LastUsedFormat.decode(try bytes(fixture), key: fixture.key) == [minted.key.id: now])
    _ = try registry.mint(name: "b")
    #expect(V2.isVersion2(try bytes(fixture)))
    #expect(try V2.decode(try bytes(fixture), key: fixture.key) == [minted.key.id: now])
  }

  /// A verify records nothing in a file it cannot read as version 2 or as
  /// an authentic version 1: one flipped byte of a version-2 file's version
  /// line, a newer version, or damage leave the file as it was (issue 22:
  /// a verify replaced such a file with a version-1 file of one key).
  @Test func aVerifyLeavesAFileItCannotReadAsItWas() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "a")
    _ = try registry.mint(name: "b")
    var unmarked = try bytes(fixture)
    #expect(V2.isVersion2(unmarked))
    unmarked[0] ^= 0x01
    var newer = LastUsedFormat.encode([minted.key.id: 1_700_000_000], key: fixture.key)
    newer[33] = UInt8(ascii: "3")
    var edited = LastUsedFormat.encode([minted.key.id: 1_700_000_000], key: fixture.key)
    edited[edited.count - 3] ^= 0x01
    for file in [unmarked, newer, edited] {
      try write(file, fixture)
      #expect(try fixture.open().verify(minted.key.testString).name == "a")
      #expect(try bytes(fixture) == file)
    }
  }

  /// Verify's search reads at most ⌈log2(n + 1)⌉ slots, finds every slot,
  /// and misses an absent id.
  @Test func theSearchReadsLogarithmicallyManySlots() throws {
    let ids = (0..<1_000).map { V2.idValue(AssistantKeyID(digest: SHA256.hash(data: Array("k\($0)".utf8)))) }.sorted()
    let file = V2.encode(ids.map { ($0, nil) }, key: Self.key)
    var reads = 0
    let source = RegistrySource(size: file.count) { offset, count in
      reads += 1
      return Array(file[offset..<(offset + count)])
    }
    let count = try V2.header(file, size: file.count, key: Self.key)
    for (index, id) in ids.enumerated() where index % 97 == 0 || index == ids.count - 1 {
      reads = 0
      #expect(try V2.find(id, in: source, count: count)?.index == index)
      #expect(reads <= 10)
    }
    reads = 0
    #expect(try V2.find(ids[0] &- 1, in: source, count: count) == nil)
    #expect(reads <= 10)
  }

  /// Each rejection of the header refuses the whole file (every key never
  /// used); a slot under another key or with time 0 reads as never used.
  @Test func headerRejectionsAndSlotsThatReadAsNeverUsed() throws {
    let keyed = HMACSHA256(key: Self.key)
    let ids: [UInt64] = [3, 7, 9]
    let good = V2.encode(ids.map { ($0, V2.stamp(id: $0, time: 1_800_000_000 + $0, keyed: keyed)[...]) }, key: Self.key)
    #expect(try V2.decode(good, key: Self.key).count == 3)
    func refused(_ file: [UInt8]) -> AssistantKeyError? { assistantError { _ = try V2.decode(file, key: Self.key) } }
    var flipped = good
    flipped[36] ^= 1
    #expect(refused(flipped) == .registryDamaged(.authenticationFailed))
    #expect(refused(Array(good.dropLast())) != nil)
    #expect(refused(good + [0]) != nil)
    #expect(refused(Array(good[0..<70])) != nil)
    var unsorted = good
    unsorted.replaceSubrange(71..<119, with: good[119..<167])
    unsorted.replaceSubrange(119..<167, with: good[71..<119])
    #expect(
      refused(unsorted) == .registryDamaged(.malformed(line: 0, reason: "slot 1: ids are not strictly ascending")))
    let other = HMACSHA256(key: try SymmetricKey.generate())
    let foreign = V2.encode([(5, V2.stamp(id: 5, time: 1_800_000_000, keyed: other)[...])], key: Self.key)
    #expect(try V2.decode(foreign, key: Self.key).isEmpty)
    let zero = V2.encode([(5, V2.stamp(id: 5, time: 0, keyed: keyed)[...])], key: Self.key)
    #expect(try V2.decode(zero, key: Self.key).isEmpty)
    // A slot moved to another id fails its MAC (the MAC covers the id).
    let moved = V2.encode([(6, V2.stamp(id: 5, time: 1_800_000_000, keyed: keyed)[...])], key: Self.key)
    #expect(try V2.decode(moved, key: Self.key).isEmpty)
  }

  /// Instances in concurrent threads (each its own lock descriptor, as
  /// processes have) verifying keys while another mints (rebuilding the
  /// file) keep it a valid version-2 file in which every key verified
  /// after the last rebuild, or carried over by it, has an authentic slot.
  @Test func concurrentVerifiesAndWritesKeepTheFileValid() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let keys = try (0..<12).map { try registry.mint(name: "k\($0)") }
    try registry.addRandomEntriesForTesting(count: 200)
    let writer = try fixture.open()
    let readers = try (0..<5).map { _ in try fixture.open() }
    DispatchQueue.concurrentPerform(iterations: 6) { index in
      if index == 0 {
        for round in 0..<4 { _ = try? writer.mint(name: "new\(round)") }
        return
      }
      for _ in 0..<3 {
        for key in keys { _ = try? readers[index - 1].verify(key.key.testString) }
      }
    }
    let file = try bytes(fixture)
    #expect(file.count == V2.headerByteCount + V2.slotByteCount * 216)
    let table = try V2.decode(file, key: fixture.key)
    // Every key was verified and the last rebuild carried over what was
    // recorded before it; a use recorded by an instance that had already
    // coalesced it may be lost to a rebuild (advisory), so check validity
    // and that no filler was marked.
    #expect(Set(table.keys).isSubset(of: Set(keys.map(\.key.id))))
    #expect(table.values.allSatisfy { $0 == Int64(fixture.clock.now.timeIntervalSince1970) })
    // A fresh instance after the writes records every key.
    let fresh = try fixture.open()
    for key in keys { _ = try fresh.verify(key.key.testString) }
    #expect(Set(try V2.decode(try bytes(fixture), key: fixture.key).keys) == Set(keys.map(\.key.id)))
  }
}
