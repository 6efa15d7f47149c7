import FoundationEssentials
import TaskCrypto
import TaskSystem

/// The device's registry of assistant keys: mint, verify (fail closed),
/// revoke, rotate and list.
///
/// The registry keeps only `SHA-256` of each key string, in one indexed
/// file (docs/formats/registry.md, version 2) whose header and records are
/// authenticated with HMAC-SHA256 under the caller's integrity key (a
/// device-only vault item). Whoever can write the file but lacks that key
/// cannot add a digest, un-revoke a key or change a trust level: the key
/// concerned (or, for the header, every key) then fails closed.
///
/// Every change is one durable write (temp file, fsync, rename, directory
/// fsync) under an exclusive `flock`. Opening reads the file's 126-byte
/// header; verify binary-searches the index with `pread` and reads one
/// record, so it is O(log n) in the number of keys; a key found is cached
/// while the file is unchanged (one `lstat` per verify), and every change
/// another process made before a verify began is seen by it.
///
/// One instance may be shared between threads; its calls are serialised.
public final class AssistantKeyRegistry: @unchecked Sendable {
  /// Last-used times are written at most once per key per this many
  /// seconds: 60.
  public static let lastUsedResolution: Int64 = 60
  /// The longest rotation overlap window: 30 days, in seconds.
  public static let maximumOverlap: Int64 = 30 * 86_400
  /// The longest key lifetime: 3650 days, in seconds.
  public static let maximumLifetime: Int64 = 3_650 * 86_400
  /// The most keys one registry holds, revoked keys included: 1,000,000.
  public static let maximumKeyCount = RegistryFormatV2.maximumKeyCount
  /// The most capability grants one key carries: 16.
  public static let maximumGrantCount = Validation.maximumGrantCount
  /// The grants this project's gate (`tasker mcp`) knows, sorted:
  /// `notes:read` (read note text and page bodies), `pages:write` (add
  /// pages) and `tasks:write` (add, edit, complete and delete tasks).
  /// `taskkey mint` refuses any other; the registry itself stores any
  /// well-formed grant, for other hosts of the library.
  public static let knownGrants = ["notes:read", "pages:write", "tasks:write"]

  let files: RegistryFiles
  let key: SymmetricKey
  let anchor: GenerationAnchor?
  /// The newest generation the anchor was last seen to hold; kept so that a
  /// registry reread while the anchor cannot be read (the vault was locked
  /// after this instance opened) is still held to it.
  var floor: UInt64 = 0
  let clock: () -> Date
  let mutex = ThreadLock()
  var snapshot = Snapshot()
  /// A watch of the registry's directory, made after `snapshot` was read
  /// and before a check that the file at the path is still its file; nil
  /// when it saw a change or could not be made (`refresh`).
  var directoryWatch: DirectoryWatch?
  var lastUsedKnown: [AssistantKeyID: Int64] = [:]
  /// How many times the registry file was read and parsed (tests check
  /// that verify does not reread an unchanged file).
  var loadCount = 0

  /// Opens the registry in `directory`.
  ///
  /// Nothing is created until the first change; a missing registry is an
  /// empty one, in which every key is unknown.
  ///
  /// - Parameters:
  ///   - directory: the device-only store's directory, which is excluded
  ///     from backups. Created with mode 0700 on the first change if
  ///     missing; refused when it is a symlink, not ours, or open to group
  ///     or others.
  ///   - integrityKey: the registry's integrity key from the vault's
  ///     device-only store, or nil when the vault is locked.
  /// - Throws: `AssistantKeyError.vaultLocked` when `integrityKey` is nil;
  ///   `.registryDamaged` when the directory or file is unsafe, unreadable
  ///   or fails its integrity check.
  public convenience init(directory: String, integrityKey: SymmetricKey?) throws {
    try self.init(directory: directory, integrityKey: integrityKey, anchor: nil, clock: Date.init)
  }

  /// Where the registry's newest generation is remembered outside the
  /// registry file, so that an older authentic copy put back in its place
  /// is refused (`registryDamaged(.rolledBack)`). `read` returns 0 when
  /// nothing is remembered yet; `advance` is called after every write.
  public struct GenerationAnchor: Sendable {
    /// Returns the newest generation remembered.
    public var read: @Sendable () throws -> UInt64
    /// Remembers a newer generation.
    public var advance: @Sendable (UInt64) throws -> Void

    /// Pairs the two operations.
    public init(read: @escaping @Sendable () throws -> UInt64, advance: @escaping @Sendable (UInt64) throws -> Void) {
      self.read = read
      self.advance = advance
    }
  }

  /// The test seam: a chosen clock and a file system that injects faults.
  init(
    directory: String,
    integrityKey: SymmetricKey?,
    anchor: GenerationAnchor?,
    clock: @escaping () -> Date,
    fileSystem: any FileSystem = PosixFileSystem()
  ) throws {
    guard let integrityKey else { throw AssistantKeyError.vaultLocked }
    self.key = integrityKey
    self.anchor = anchor
    self.files = RegistryFiles(directory: directory, fileSystem: fileSystem)
    self.clock = clock
    if try files.identity(of: directory) != nil { try files.checkDirectory() }
    try locked { try refresh() }
  }

  // MARK: - Verify

  /// Decides whether a presented key string is good, failing closed.
  ///
  /// The string is checked against the grammar and its checksum before
  /// anything is looked up; then `SHA-256(presented)` is searched for in
  /// the registry's index and its one record authenticated. A
  /// success may record the last-used time (at most once a minute per key;
  /// a failure to record it does not fail the verify).
  ///
  /// - Parameter presented: the key's bytes exactly as presented (trim a
  ///   transport's trailing newline first; nothing else is trimmed).
  /// - Returns: the key's identity.
  /// - Throws: exactly one of `AssistantKeyError.malformedKey`,
  ///   `.badChecksum`, `.unknownKey`, `.revoked`, `.expired`,
  ///   `.registryDamaged` (and `.vaultLocked` from `init`). Never anything
  ///   else.
  public func verify(_ presented: UnsafeRawBufferPointer) throws(AssistantKeyError) -> AssistantIdentity {
    let digest = try AssistantKey.check(presented)
    do {
      return try locked {
        try refresh()
        guard let entry = try lookup(digest) else { throw AssistantKeyError.unknownKey }
        let now = seconds(clock())
        if case .until(let end) = entry.revocation, now >= end {
          // The overlap ended: make it permanent so a clock set back cannot revive it.
          try? mutateHoldingMutex { _, _ in }
        }
        let identity = try entry.verdict(at: now)
        recordUse(of: entry.id, at: now)
        return identity
      }
    } catch let error as AssistantKeyError {
      throw error
    } catch {
      // Unreachable today (every call above throws AssistantKeyError); kept
      // so that the closed set of outcomes holds by construction.
      throw AssistantKeyError.registryDamaged(.malformed(line: 0, reason: "unexpected \(type(of: error))"))
    }
  }

  /// Verifies a key given as bytes (for example read from standard input
  /// into locked memory); see `verify(_:)` on a raw buffer.
  ///
  /// - Throws: as `verify(_:)` on a raw buffer.
  public func verify<Bytes: ContiguousBytes>(_ presented: Bytes) throws(AssistantKeyError) -> AssistantIdentity {
    let result = presented.withUnsafeBytes { bytes in Result { () throws(AssistantKeyError) in try verify(bytes) } }
    return try result.get()
  }

  /// Verifies a key given as a `String`, as a server receives it in a
  /// header. The caller's `String` cannot be wiped; see SECURITY.md.
  ///
  /// - Throws: as `verify(_:)` on a raw buffer.
  public func verify(_ presented: String) throws(AssistantKeyError) -> AssistantIdentity {
    var copy = presented
    let result = copy.withUTF8 { bytes in
      Result { () throws(AssistantKeyError) in try verify(UnsafeRawBufferPointer(bytes)) }
    }
    return try result.get()
  }

  // MARK: - Changes

  /// Mints a new key for an assistant and registers its digest.
  ///
  /// The key is returned only after the registry holding its digest is
  /// durably on disk; it is never stored, so show it once.
  ///
  /// - Parameters:
  ///   - name: the assistant, 1 to 64 of `A-Z a-z 0-9 . _ -`.
  ///   - trust: the trust level; `.standard` by default.
  ///   - grants: capability grants, each 1 to 64 of `a-z 0-9 . _ : -`;
  ///     sorted and deduplicated; at most `maximumGrantCount`.
  ///   - expiresAfter: the lifetime, at most `maximumLifetime`; nil for a
  ///     key that does not expire.
  /// - Returns: the key (once) and its record.
  /// - Throws: `AssistantKeyError.invalidName`, `.invalidGrant`,
  ///   `.tooManyGrants`, `.invalidDuration`, `.nameInUse` when the name has
  ///   a current key, `.registryFull`, `.registryDamaged`,
  ///   `.system`, `.idCollision`, `.crypto`.
  public func mint(
    name: String,
    trust: TrustLevel = .standard,
    grants: [String] = [],
    expiresAfter: Duration? = nil
  ) throws -> MintedAssistantKey {
    let grants = try Self.validated(name: name, grants: grants)
    let lifetime = try expiresAfter.map { try Self.seconds($0, limit: Self.maximumLifetime) }
    let key = try AssistantKey.generate()
    return try locked {
      try mutateHoldingMutex { contents, now in
        let inUse = contents.entries.contains {
          $0.name == name && $0.revocation == .none && ($0.expires.map { now < $0 } ?? true)
        }
        guard !inUse else { throw AssistantKeyError.nameInUse(name) }
        let entry = RegistryEntry(
          id: key.id, digest: key.digest, created: now, expires: lifetime.map { now + $0 }, revocation: .none,
          trust: trust, name: name, grants: grants)
        try Self.append(entry, to: &contents)
        return MintedAssistantKey(key: key, record: record(of: entry, at: now, lastUsed: nil))
      }
    }
  }

  /// Revokes a key at once and for good, in one durable write.
  ///
  /// Revoking a revoked key changes nothing and succeeds. The next verify
  /// in any process refuses the key.
  ///
  /// - Parameter id: the key's public id.
  /// - Returns: the key's record after revocation.
  /// - Throws: `AssistantKeyError.unknownID`, `.registryDamaged`,
  ///   `.system`.
  @discardableResult
  public func revoke(_ id: AssistantKeyID) throws -> AssistantKeyRecord {
    try locked {
      try mutateHoldingMutex { contents, now in
        guard let index = contents.entries.firstIndex(where: { $0.id == id }) else {
          throw AssistantKeyError.unknownID(id)
        }
        if case .revoked = contents.entries[index].revocation {
        } else {
          contents.entries[index].revocation = .revoked(now)
        }
        return record(of: contents.entries[index], at: now, lastUsed: readLastUsed()[id])
      }
    }
  }

  /// Mints a replacement key for an assistant and revokes its old key, in
  /// one durable write.
  ///
  /// Every key of that name that is not already revoked or overlapping is
  /// revoked now, or, with an overlap, at the end of the window; until then
  /// both old and new keys verify. The new key takes the trust level and
  /// grants of the newest old key, and its lifetime unless one is given.
  ///
  /// - Parameters:
  ///   - assistant: the assistant's name.
  ///   - overlap: how long the old key goes on verifying, at most
  ///     `maximumOverlap`; nil or absent to revoke it at once.
  ///   - expiresAfter: the new key's lifetime; nil to keep the old one's.
  /// - Returns: the new key (once) and its record.
  /// - Throws: `AssistantKeyError.noSuchAssistant`, `.invalidDuration`,
  ///   `.registryFull`, `.registryDamaged`, `.system`,
  ///   `.idCollision`, `.crypto`.
  public func rotate(
    assistant: String,
    overlap: Duration? = nil,
    expiresAfter: Duration? = nil
  ) throws -> MintedAssistantKey {
    let window = try overlap.map { try Self.seconds($0, limit: Self.maximumOverlap) }
    let lifetime = try expiresAfter.map { try Self.seconds($0, limit: Self.maximumLifetime) }
    let key = try AssistantKey.generate()
    return try locked {
      try mutateHoldingMutex { contents, now in
        let old = contents.entries.indices.filter {
          contents.entries[$0].name == assistant && contents.entries[$0].revocation == .none
        }
        guard
          let newest = old.max(by: {
            (contents.entries[$0].created, contents.entries[$0].id) < (
              contents.entries[$1].created, contents.entries[$1].id
            )
          })
        else { throw AssistantKeyError.noSuchAssistant(assistant) }
        let template = contents.entries[newest]
        for index in old {
          contents.entries[index].revocation = window.map { .until(now + $0) } ?? .revoked(now)
        }
        let keptLifetime = template.expires.map { $0 - template.created }
        let entry = RegistryEntry(
          id: key.id, digest: key.digest, created: now, expires: (lifetime ?? keptLifetime).map { now + $0 },
          revocation: .none, trust: template.trust, name: assistant, grants: template.grants)
        try Self.append(entry, to: &contents)
        return MintedAssistantKey(key: key, record: record(of: entry, at: now, lastUsed: nil))
      }
    }
  }

  /// Lists every key, revoked ones included, oldest first. Never shows a
  /// key or a digest.
  ///
  /// - Returns: one record per key, with its status now and its last use.
  /// - Throws: `AssistantKeyError.registryDamaged`.
  public func keys() throws -> [AssistantKeyRecord] {
    try locked {
      try refresh(full: true)
      let now = seconds(clock())
      let lastUsed = readLastUsed()
      return snapshot.contents.entries
        .sorted { ($0.created, $0.id) < ($1.created, $1.id) }
        .map { record(of: $0, at: now, lastUsed: lastUsed[$0.id]) }
    }
  }

  // MARK: - Internals

  func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
    mutex.lock()
    defer { mutex.unlock() }
    return try body()
  }

  /// Read-modify-write under the `flock`: reread, settle ended overlaps,
  /// apply `change`, write the next generation durably. Call with `mutex`
  /// held.
  func mutateHoldingMutex<Result>(
    _ change: (inout RegistryFormat.Contents, Int64) throws -> Result
  ) throws -> Result {
    try files.prepareDirectory()
    return try files.withLock {
      try refresh(full: true)
      var contents = snapshot.contents
      let now = seconds(clock())
      for index in contents.entries.indices { contents.entries[index].settle(at: now) }
      let result = try change(&contents, now)
      contents.generation += 1
      let file = try files.replace(files.registryPath, with: RegistryFormatV2.encode(contents, key: key))
      snapshot = Snapshot(contents: contents, file: file)
      rebuildLastUsed(for: contents.entries.map(\.id))
      // The change has taken effect with the rename above, but it is
      // permanent only once the anchor remembers the generation: an older
      // registry put back before that would be accepted. So the command is
      // acknowledged only when this second write succeeds; if it fails the
      // registry is merely newer than the anchor (allowed), the caller says
      // so, and the next write (running the command again) finishes it.
      do {
        try anchor?.advance(contents.generation)
      } catch {
        throw AssistantKeyError.notPermanent(generation: contents.generation, reason: "\(error)")
      }
      floor = Swift.max(floor, contents.generation)
      return result
    }
  }
}
