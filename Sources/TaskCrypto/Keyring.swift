/// A set of note keys with one primary: the primary seals, every key opens.
///
/// Rotation adds a new primary and keeps the old keys for opening; retiring
/// removes a key, after which values it sealed no longer open (they fail
/// with `unknownKeyID`, never as plain text). The primary cannot be retired.
public struct Keyring: Sendable, Equatable, CustomStringConvertible {
  /// All keys, ordered by when they were added.
  public private(set) var keys: [NoteKey]
  /// The id of the key that seals.
  public private(set) var primaryID: KeyID

  /// A keyring holding only `primary`.
  public init(primary: NoteKey) {
    self.keys = [primary]
    self.primaryID = primary.id
  }

  /// A keyring of existing keys.
  ///
  /// - Throws: `TaskCryptoError.duplicateKeyID` when two keys share an id,
  ///   `.unknownKeyID` when `primaryID` is not among them.
  public init(keys: [NoteKey], primaryID: KeyID) throws {
    var seen = Set<KeyID>()
    for key in keys where !seen.insert(key.id).inserted {
      throw TaskCryptoError.duplicateKeyID(key.id)
    }
    guard seen.contains(primaryID) else { throw TaskCryptoError.unknownKeyID(primaryID) }
    self.keys = keys
    self.primaryID = primaryID
  }

  /// A keyring with one freshly generated primary key.
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable`.
  public static func generate() throws -> Keyring {
    Keyring(primary: try NoteKey.generate())
  }

  /// The key that seals.
  public var primary: NoteKey {
    keys.first { $0.id == primaryID }!
  }

  /// The ids of all keys, in the order they were added.
  public var ids: [KeyID] { keys.map(\.id) }

  /// The key with `id`, or nil.
  public func key(for id: KeyID) -> NoteKey? {
    index(of: id).map { keys[$0] }
  }

  /// Where the key with `id` is in `keys`, or nil: for the open path,
  /// which then borrows the key in place instead of copying it out.
  func index(of id: KeyID) -> Int? {
    var index = 0
    while index < keys.count {
      if keys[index].id == id { return index }
      index += 1
    }
    return nil
  }

  /// Adds a key that opens but does not seal until promoted.
  ///
  /// - Throws: `TaskCryptoError.duplicateKeyID` when the id is taken.
  public mutating func add(_ key: NoteKey) throws {
    guard self.key(for: key.id) == nil else { throw TaskCryptoError.duplicateKeyID(key.id) }
    keys.append(key)
  }

  /// Makes a key with a fresh id, adds it and promotes it to primary. Old
  /// keys stay so that values they sealed still open.
  ///
  /// - Returns: the new primary key.
  /// - Throws: `TaskCryptoError.resourceUnavailable`.
  @discardableResult
  public mutating func rotate() throws -> NoteKey {
    let key = try NoteKey.generate(avoiding: Set(ids))
    keys.append(key)
    primaryID = key.id
    return key
  }

  /// Makes the key with `id` the primary.
  ///
  /// - Throws: `TaskCryptoError.unknownKeyID` when no key has that id.
  public mutating func promote(_ id: KeyID) throws {
    guard key(for: id) != nil else { throw TaskCryptoError.unknownKeyID(id) }
    primaryID = id
  }

  /// Removes the key with `id`. Values it sealed stop opening.
  ///
  /// - Throws: `TaskCryptoError.cannotRetirePrimary` for the primary,
  ///   `.unknownKeyID` when no key has that id.
  public mutating func retire(_ id: KeyID) throws {
    guard let retired = key(for: id) else { throw TaskCryptoError.unknownKeyID(id) }
    guard id != primaryID else { throw TaskCryptoError.cannotRetirePrimary(id) }
    keys.removeAll { $0.id == id }
    retired.key.discardCachedContexts()
  }

  /// Lists ids only: `Keyring(primary: <kid>, keys: [<kid>, …])`.
  public var description: String {
    "Keyring(primary: \(primaryID), keys: [\(ids.map(\.hex).joined(separator: ", "))])"
  }
}
