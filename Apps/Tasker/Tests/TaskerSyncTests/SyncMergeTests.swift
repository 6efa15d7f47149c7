import CommandKit
import Testing

@testable import TaskerSync

/// `SyncRecord.joined` on its own: the join laws on random records, and
/// the merge rules of docs/formats/sync-storage.md, *Applying: the merge*,
/// one case each.
@Suite struct SyncMergeTests {
  static let devices = ["11", "22", "33"].map { String(repeating: $0, count: 16) }
  static let recordID = String(repeating: "ab", count: 16)

  static func clock(_ time: UInt64, _ device: Int = 0) -> SyncClock {
    SyncClock(time: time, device: devices[device])
  }

  static func version(_ number: Int) -> String {
    let digits = String(number, radix: 16)
    return String(repeating: "0", count: 32 - digits.count) + digits
  }

  /// A random state of one record, drawn from small pools so that equal
  /// clocks, equal versions with other texts, and heads that are also
  /// superseded all come up.
  static func randomRecord(_ random: inout SplitMix64) -> SyncRecord {
    var record = SyncRecord(kind: .task, id: recordID)
    let values: [JSONValue] = [.null, .string("a"), .string("b"), .string("é"), .integer(0), .integer(3), .integer(-1)]
    for name in ["title", "due", "priority", "status"] where random.percent(60) {
      record.fields[name] = .init(
        value: random.element(values), clock: clock(UInt64(1 + random.below(4)), random.below(3)))
    }
    if random.percent(25) { record.deleted = clock(UInt64(1 + random.below(4)), random.below(3)) }
    for _ in 0..<random.below(4) {
      record.heads[version(random.below(6))] = .init(
        clock: clock(UInt64(1 + random.below(4)), random.below(3)), text: "tc1.fake:" + random.element(["x", "y", "z"]))
    }
    for _ in 0..<random.below(3) { record.superseded.insert(version(random.below(6))) }
    return record
  }

  @Test func joinIsCommutativeAssociativeAndIdempotent() {
    var random = SplitMix64(seed: 0x5EED)
    for round in 0..<3000 {
      let a = Self.randomRecord(&random)
      let b = Self.randomRecord(&random)
      let c = Self.randomRecord(&random)
      #expect(a.joined(with: b) == b.joined(with: a), "commutative, round \(round)")
      #expect(a.joined(with: b).joined(with: c) == a.joined(with: b.joined(with: c)), "associative, round \(round)")
      #expect(a.joined(with: c).joined(with: b) == a.joined(with: b).joined(with: c), "any order, round \(round)")
      // A head listed in its own superseded is dropped by the first join,
      // so idempotence is of the joined form.
      let normal = a.joined(with: a)
      #expect(normal.joined(with: normal) == normal, "idempotent, round \(round)")
      let ab = a.joined(with: b)
      #expect(ab.joined(with: b) == ab, "absorbs what it joined, round \(round)")
      #expect(ab.joined(with: ab) == ab, "idempotent after a join, round \(round)")
      #expect(ab.heads.keys.allSatisfy { !ab.superseded.contains($0) }, "no superseded head, round \(round)")
      #expect(ab.superseded == a.superseded.union(b.superseded), "superseded is the union, round \(round)")
    }
  }

  /// The record form written straight out (`SyncPayload.encoded(record:)`,
  /// what capture keeps and sends) is byte for byte the encoding of the
  /// record form's value, with and without a body, a deletion, fields,
  /// and texts that need escaping.
  @Test func aRecordWrittenStraightOutIsItsValueEncoded() {
    var random = SplitMix64(seed: 0xE4C0DE)
    for _ in 0..<500 {
      var record = Self.randomRecord(&random)
      if random.percent(30) {
        record.fields["title"] = .init(value: .string("a \"quote\"\n\u{1}/é"), clock: Self.clock(9))
      }
      #expect(SyncPayload.encoded(record: record) == SyncPayload.value(of: record).encoded)
    }
    #expect(
      SyncPayload.encoded(record: SyncRecord(kind: .page, id: Self.recordID))
        == SyncPayload.value(of: SyncRecord(kind: .page, id: Self.recordID)).encoded)
  }

  /// A clock reads only as 16 lowercase hex digits, `-` and 32 more.
  @Test func aClockReadsOnlyInItsOneSpelling() {
    let good = SyncClock(time: 0xabcd_ef01, device: Self.recordID).text
    #expect(SyncClock(good)?.text == good)
    #expect(SyncClock(good.uppercased()) == nil)
    #expect(SyncClock(String(good.dropLast())) == nil)
    #expect(SyncClock(String(good.prefix(16)) + "0" + String(good.dropFirst(17))) == nil)
    #expect(SyncClock(String(repeating: "0", count: 16) + "-" + String(repeating: "g", count: 32)) == nil)
    #expect(SyncClock(String(repeating: "0", count: 17) + String(repeating: "a", count: 32)) == nil)
  }

  @Test func theJoinIsAnUpperBound() {
    var random = SplitMix64(seed: 0xB0B)
    for _ in 0..<2000 {
      let a = Self.randomRecord(&random)
      let b = Self.randomRecord(&random)
      let joined = a.joined(with: b)
      for name in Set(a.fields.keys).union(b.fields.keys) {
        let clocks = [a.fields[name]?.clock, b.fields[name]?.clock].compactMap { $0 }
        #expect(joined.fields[name]?.clock == clocks.max())
      }
      #expect(joined.deleted == [a.deleted, b.deleted].compactMap { $0 }.max())
      #expect(Set(joined.heads.keys) == Set(a.heads.keys).union(b.heads.keys).subtracting(joined.superseded))
    }
  }

  @Test func aDeleteWinsOverAnEarlierAndAConcurrentEdit() {
    var deleted = SyncRecord(kind: .task, id: Self.recordID)
    deleted.fields["title"] = .init(value: .string("old"), clock: Self.clock(1, 0))
    deleted.deleted = Self.clock(5, 0)
    deleted.superseded = [Self.version(1)]
    var edited = SyncRecord(kind: .task, id: Self.recordID)
    edited.fields["title"] = .init(value: .string("new"), clock: Self.clock(9, 1))
    edited.heads[Self.version(1)] = .init(clock: Self.clock(2, 1), text: "tc1.fake:seen")
    edited.heads[Self.version(2)] = .init(clock: Self.clock(9, 1), text: "tc1.fake:later")
    for joined in [deleted.joined(with: edited), edited.joined(with: deleted)] {
      #expect(joined.deleted == Self.clock(5, 0))
      #expect(joined.shownVersion == nil)
      // The later edit's field value is kept in the state, but nothing is shown.
      #expect(joined.fields["title"]?.value == .string("new"))
      // The text the deleter saw goes; the one it did not stays, as a conflict.
      #expect(Set(joined.heads.keys) == [Self.version(2)])
      #expect(joined.conflictVersions == [Self.version(2)])
    }
    // Two deletes: the greater clock.
    var other = deleted
    other.deleted = Self.clock(5, 2)
    #expect(deleted.joined(with: other).deleted == Self.clock(5, 2))
    #expect(other.joined(with: deleted).deleted == Self.clock(5, 2))
  }

  @Test func aSupersessionChainLeavesOnlyTheLastVersion() {
    // A writes v1; B replaces it with v2; C replaces v2 with v3.
    var a = SyncRecord(kind: .page, id: Self.recordID)
    a.heads[Self.version(1)] = .init(clock: Self.clock(1, 0), text: "tc1.fake:one")
    var b = a
    b.superseded.insert(Self.version(1))
    b.heads = [Self.version(2): .init(clock: Self.clock(2, 1), text: "tc1.fake:two")]
    var c = b
    c.superseded.insert(Self.version(2))
    c.heads = [Self.version(3): .init(clock: Self.clock(3, 2), text: "tc1.fake:three")]
    let orders = [[a, b, c], [a, c, b], [b, a, c], [b, c, a], [c, a, b], [c, b, a]]
    for order in orders {
      let joined = order.dropFirst().reduce(order[0]) { $0.joined(with: $1) }
      #expect(Set(joined.heads.keys) == [Self.version(3)])
      #expect(joined.superseded == [Self.version(1), Self.version(2)])
      #expect(joined.shownVersion == Self.version(3))
      #expect(joined.conflictVersions.isEmpty)
    }
    // A concurrent branch from v1 (D replaced v1 with v4 without seeing v2)
    // stays as a conflict; the later clock is shown.
    var d = a
    d.superseded.insert(Self.version(1))
    d.heads = [Self.version(4): .init(clock: Self.clock(2, 0), text: "tc1.fake:four")]
    for joined in [c.joined(with: d), d.joined(with: c), a.joined(with: d).joined(with: b).joined(with: c)] {
      #expect(Set(joined.heads.keys) == [Self.version(3), Self.version(4)])
      #expect(joined.shownVersion == Self.version(3))
      #expect(joined.conflictVersions == [Self.version(4)])
    }
  }

  @Test func equalClocksBreakTiesTheSameWayInEitherOrder() {
    let same = Self.clock(7, 1)
    var left = SyncRecord(kind: .task, id: Self.recordID)
    var right = left
    left.fields["title"] = .init(value: .string("apple"), clock: same)
    right.fields["title"] = .init(value: .string("banana"), clock: same)
    left.fields["priority"] = .init(value: .integer(3), clock: same)
    right.fields["priority"] = .init(value: .integer(2), clock: same)
    left.fields["due"] = .init(value: .null, clock: same)
    right.fields["due"] = .init(value: .string("2026-01-01"), clock: same)
    for joined in [left.joined(with: right), right.joined(with: left)] {
      // The greater compact JSON encoding byte-wise: "banana" > "apple", 3 > 2, "\"…" < "null".
      #expect(joined.fields["title"]?.value == .string("banana"))
      #expect(joined.fields["priority"]?.value == .integer(3))
      #expect(joined.fields["due"]?.value == .null)
    }
    // One version id with two heads: the greater text, then the greater clock.
    var one = SyncRecord(kind: .task, id: Self.recordID)
    var two = one
    one.heads[Self.version(1)] = .init(clock: Self.clock(9, 0), text: "tc1.fake:aaa")
    two.heads[Self.version(1)] = .init(clock: Self.clock(1, 0), text: "tc1.fake:bbb")
    #expect(one.joined(with: two).heads[Self.version(1)]?.text == "tc1.fake:bbb")
    #expect(two.joined(with: one).heads[Self.version(1)]?.text == "tc1.fake:bbb")
    two.heads[Self.version(1)] = .init(clock: Self.clock(9, 1), text: "tc1.fake:aaa")
    #expect(one.joined(with: two).heads[Self.version(1)]?.clock == Self.clock(9, 1))
    #expect(two.joined(with: one).heads[Self.version(1)]?.clock == Self.clock(9, 1))
    // Two heads with equal clocks: the greater version id is shown.
    var heads = SyncRecord(kind: .page, id: Self.recordID)
    heads.heads[Self.version(2)] = .init(clock: same, text: "tc1.fake:x")
    heads.heads[Self.version(5)] = .init(clock: same, text: "tc1.fake:y")
    #expect(heads.shownVersion == Self.version(5))
    #expect(heads.conflictVersions == [Self.version(2)])
  }

  @Test func clocksOrderByTimeThenCounterThenDevice() {
    #expect(Self.clock(1 << 16, 2) < Self.clock(2 << 16, 0))
    #expect(Self.clock((1 << 16) + 1, 0) > Self.clock(1 << 16, 2))
    #expect(Self.clock(5, 0) < Self.clock(5, 1))
    #expect(SyncClock(Self.clock(5, 1).text) == Self.clock(5, 1))
  }
}
