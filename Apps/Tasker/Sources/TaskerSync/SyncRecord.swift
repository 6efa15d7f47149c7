import CommandKit
import TaskCrypto

/// A hybrid logical clock value as the format writes it: 16 lowercase hex
/// digits (milliseconds << 16 | counter), `-`, the writing device's id in
/// 32 lowercase hex. Clocks order as byte strings.
public struct SyncClock: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The 49 ASCII bytes.
  public let text: String

  /// Reads a clock.
  ///
  /// - Returns: nil for any other text.
  public init?(_ text: String) {
    // 16 hex digits, "-", 32 hex digits: checked byte by byte, without copies.
    let bytes = text.utf8
    guard bytes.count == 49 else { return nil }
    for (index, byte) in bytes.enumerated()
    where index == 16 ? byte != UInt8(ascii: "-") : !SyncHex.isLowercaseHexDigit(byte) {
      return nil
    }
    self.text = text
  }

  /// The clock of `time` (ms << 16 | counter) on `device` (32 hex digits).
  public init(time: UInt64, device: String) {
    text = Hex.encode(SyncObjectFormat.bigEndian(time)) + "-" + device
  }

  /// The time part: ms << 16 | counter.
  public var time: UInt64 { UInt64(text.prefix(16), radix: 16) ?? 0 }

  /// Byte-wise order.
  public static func < (lhs: SyncClock, rhs: SyncClock) -> Bool {
    lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8)
  }

  /// The text.
  public var description: String { text }
}

/// The ids of the format: bytes in lowercase hex (TaskCrypto's `Hex`, the
/// one hex codec of the project).
public enum SyncHex {
  /// Whether `text` is `count` bytes written as lowercase hex.
  public static func isID(_ text: String, bytes count: Int = 16) -> Bool {
    text.utf8.count == 2 * count && text.utf8.allSatisfy(isLowercaseHexDigit)
  }

  /// Whether `byte` is an ASCII digit or one of `a` to `f` (what
  /// `Hex.decode` accepts).
  static func isLowercaseHexDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
  }

  /// 16 random bytes as 32 hex digits: a record, version or device id.
  public static func randomID() -> String { Hex.encode(SecureRandom.bytes(count: 16)) }
}

/// One record's synced state (docs/formats/sync-storage.md, the record
/// form): each field with its clock, the deletion, and the body's heads
/// and superseded versions. Joining two states is what applying is.
public struct SyncRecord: Sendable, Equatable {
  /// What the record is.
  public enum Kind: String, Sendable, CaseIterable {
    /// A task; its body is the note.
    case task
    /// A page; its body is the page body.
    case page
    /// An attachment of a task or page; no body, its content a blob.
    case attachment
  }

  /// A field's value and the clock it was written at.
  public struct Field: Sendable, Equatable {
    /// The value as JSON.
    public var value: JSONValue
    /// When it was written.
    public var clock: SyncClock
  }

  /// A version of the body: when it was written and its sealed text.
  public struct Head: Sendable, Equatable {
    /// When it was written.
    public var clock: SyncClock
    /// The sealed value (`tc1.…`) under the sync context of its version.
    public var text: String
  }

  /// The kind.
  public var kind: Kind
  /// The identity shared by every device: 32 lowercase hex digits.
  public var id: String
  /// Fields by name.
  public var fields: [String: Field] = [:]
  /// When the record was deleted, if it was.
  public var deleted: SyncClock?
  /// The body's heads by version id.
  public var heads: [String: Head] = [:]
  /// Versions replaced by a later one.
  public var superseded: Set<String> = []

  /// An empty state of a record.
  public init(kind: Kind, id: String) {
    self.kind = kind
    self.id = id
  }

  /// The join of this state and `other` (the same record): the merge
  /// rules 1 to 3 of the format. Commutative, associative, idempotent.
  public func joined(with other: SyncRecord) -> SyncRecord {
    var result = self
    for (name, theirs) in other.fields {
      guard let mine = result.fields[name] else {
        result.fields[name] = theirs
        continue
      }
      if theirs.clock > mine.clock
        || (theirs.clock == mine.clock && mine.value.encoded.lexicographicallyPrecedes(theirs.value.encoded))
      {
        result.fields[name] = theirs
      }
    }
    if let theirs = other.deleted { result.deleted = max(result.deleted ?? theirs, theirs) }
    result.superseded.formUnion(other.superseded)
    for (version, theirs) in other.heads {
      if let mine = result.heads[version] {
        let mineText = Array(mine.text.utf8)
        let theirText = Array(theirs.text.utf8)
        let theirsWins =
          mineText == theirText ? mine.clock < theirs.clock : mineText.lexicographicallyPrecedes(theirText)
        if !theirsWins { continue }
      }
      result.heads[version] = theirs
    }
    for version in result.superseded { result.heads[version] = nil }
    return result
  }

  /// The greatest clock in the state (a field's, a head's or the
  /// deletion's); nil when it has none.
  public var latestClock: SyncClock? {
    (fields.values.map(\.clock) + heads.values.map(\.clock) + [deleted].compactMap { $0 }).max()
  }

  /// Whether no head's version is among the superseded ones: then
  /// joining the state with an empty one gives the state itself.
  public var keepsEveryHead: Bool { superseded.isEmpty || heads.keys.allSatisfy { !superseded.contains($0) } }

  /// The shown body's version (rule 4): the head with the greatest clock,
  /// then version id; nil when deleted or without a body.
  public var shownVersion: String? {
    guard deleted == nil else { return nil }
    return heads.max { ($0.value.clock, $0.key) < ($1.value.clock, $1.key) }?.key
  }

  /// The heads that are conflicts (rule 4), sorted by version id.
  public var conflictVersions: [String] {
    let shown = shownVersion
    return heads.keys.filter { $0 != shown }.sorted()
  }

  /// The Layer 2 context of a body version's text: `sync/<kind>/<id>/<version>`.
  public func bodyContext(version: String) -> String { "sync/\(kind.rawValue)/\(id)/\(version)" }
}
