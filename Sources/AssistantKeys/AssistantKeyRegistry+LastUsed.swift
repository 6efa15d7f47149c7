import FoundationEssentials
import TaskCrypto

extension AssistantKeyRegistry {
  // MARK: - Last used (advisory)

  /// Records a use, coalesced: skipped when this process or the file shows
  /// a use of this key less than `lastUsedResolution` ago. Failures are
  /// ignored; the last-used file never decides a verify.
  ///
  /// A version-2 file: binary search for the key's slot, then its time
  /// and MAC rewritten in place (O(log n) reads, one 40-byte write). A
  /// version-1 file (before the first registry write of a version-2
  /// build): read and rewritten whole, as before. A missing file, or a
  /// key without a slot: nothing is recorded until the next registry
  /// write rebuilds the file.
  func recordUse(of id: AssistantKeyID, at now: Int64) {
    if let known = lastUsedKnown[id], known <= now, now - known < Self.lastUsedResolution { return }
    guard now > 0 else { return }
    lastUsedKnown[id] = now
    try? files.withLock {
      guard let file = try files.openForUpdate(files.lastUsedPath) else { return }
      let source = files.source(file)
      let prefix = try source.read(0, min(source.size, LastUsedFormatV2.headerByteCount))
      guard LastUsedFormatV2.isVersion2(prefix) else { return try recordUseVersion1(of: id, at: now) }
      let count = try LastUsedFormatV2.header(prefix, size: source.size, key: key)
      let value = LastUsedFormatV2.idValue(id)
      guard let found = try LastUsedFormatV2.find(value, in: source, count: count) else { return }
      let keyed = HMACSHA256(key: key)
      if let stored = LastUsedFormatV2.time(ofSlot: found.slot[...], keyed: keyed), stored <= now,
        now - stored < Self.lastUsedResolution
      {
        lastUsedKnown[id] = stored
        return
      }
      let offset = LastUsedFormatV2.headerByteCount + LastUsedFormatV2.slotByteCount * found.index + 8
      try files.write(LastUsedFormatV2.stamp(id: value, time: UInt64(now), keyed: keyed), to: file, at: offset)
    }
  }

  /// The version-1 way, under the lock: the whole file read and replaced,
  /// only when it is an authentic version-1 file. Any other file (a
  /// version-2 file with a damaged version line, a newer version, damage)
  /// is left as it is and nothing is recorded: a verify never replaces
  /// the other keys' times with a file of one key; the next registry write
  /// rebuilds it (docs/formats/last-used.md).
  private func recordUseVersion1(of id: AssistantKeyID, at now: Int64) throws {
    let read = try files.read(files.lastUsedPath, limit: LastUsedFormat.maximumFileByteCount)
    guard let bytes = read?.bytes, var table = try? LastUsedFormat.decode(bytes, key: key) else { return }
    if let stored = table[id], stored <= now, now - stored < Self.lastUsedResolution {
      lastUsedKnown[id] = stored
      return
    }
    table[id] = now
    try files.replace(files.lastUsedPath, with: LastUsedFormat.encode(table, key: key))
  }

  /// The last-used table (either version), or an empty one when the file
  /// is missing, unreadable or refused for any reason.
  func readLastUsed() -> [AssistantKeyID: Int64] {
    guard let read = try? files.read(files.lastUsedPath, limit: LastUsedFormat.maximumFileByteCount) else {
      return [:]
    }
    if LastUsedFormatV2.isVersion2(read.bytes) { return (try? LastUsedFormatV2.decode(read.bytes, key: key)) ?? [:] }
    return (try? LastUsedFormat.decode(read.bytes, key: key)) ?? [:]
  }

  /// Rewrites the last-used file as version 2 with one slot per id in
  /// `ids`, each carrying the time the old file (either version) holds
  /// for it, or never used. Called under the lock after every registry
  /// write; failures are ignored (advisory).
  func rebuildLastUsed(for ids: [AssistantKeyID]) {
    let values = ids.map(LastUsedFormatV2.idValue).sorted()
    var old = [(id: UInt64, stamp: ArraySlice<UInt8>?)]()
    if let read = try? files.read(files.lastUsedPath, limit: LastUsedFormat.maximumFileByteCount) {
      if LastUsedFormatV2.isVersion2(read.bytes) {
        // Copied verbatim, MACs unchecked: a slot that fails its MAC
        // (bound to the id) still fails after the copy.
        old = ((try? LastUsedFormatV2.slots(read.bytes, key: key, checkingMACs: false)) ?? []).map {
          ($0.id, $0.stamp)
        }
      } else if let table = try? LastUsedFormat.decode(read.bytes, key: key) {
        let keyed = HMACSHA256(key: key)
        old = table.map { (id: LastUsedFormatV2.idValue($0.key), time: $0.value) }.sorted { $0.id < $1.id }
          .map {
            ($0.id, $0.time > 0 ? LastUsedFormatV2.stamp(id: $0.id, time: UInt64($0.time), keyed: keyed)[...] : nil)
          }
      }
    }
    var next = 0
    let slots = values.map { value -> (id: UInt64, stamp: ArraySlice<UInt8>?) in
      while next < old.count && old[next].id < value { next += 1 }
      return (value, next < old.count && old[next].id == value ? old[next].stamp : nil)
    }
    _ = try? files.replace(files.lastUsedPath, with: LastUsedFormatV2.encode(slots, key: key))
  }

  /// The test seam: adds `count` entries with random digests in one write,
  /// to fill a registry quickly.
  func addRandomEntriesForTesting(count: Int, name: String = "filler") throws {
    try locked {
      try mutateHoldingMutex { contents, now in
        guard contents.entries.count + count <= Self.maximumKeyCount else {
          throw AssistantKeyError.registryFull(limit: Self.maximumKeyCount)
        }
        for _ in 0..<count {
          let digest = SHA256Digest(bytes: SecureRandom.bytes(count: 32))!
          contents.entries.append(
            RegistryEntry(
              id: AssistantKeyID(digest: digest), digest: digest, created: now, expires: nil, revocation: .revoked(now),
              trust: .restricted, name: name, grants: []))
        }
      }
    }
  }
}

/// The advisory last-used file, version 1 (docs/formats/last-used.md): the
/// authenticated frame with header `taskkey assistant-key last-used v1`,
/// then one line `<id> <unix seconds>` per key, strictly ascending by id,
/// and no generation line.
enum LastUsedFormat {
  static let header = "taskkey assistant-key last-used v1"
  static let headerStem = "taskkey assistant-key last-used v"
  /// The largest file read (either version): 48 MiB, above the 41,000,085
  /// bytes of a version-1 line (at most 41 bytes) for each of 10^6 keys
  /// with header and MAC line, and the 48,000,071 bytes of 10^6 version-2
  /// slots.
  static let maximumFileByteCount = 48 << 20

  /// The file's bytes for `table`, lines sorted by id, under `key`.
  static func encode(_ table: [AssistantKeyID: Int64], key: SymmetricKey) -> [UInt8] {
    let lines = table.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
    return AuthenticatedFile.seal(header: header, lines: lines, key: key)
  }

  /// Reads the file in the order of its specification: size, header, MAC
  /// line, MAC, then every line `id SP number` with ids strictly ascending.
  ///
  /// - Throws: `AssistantKeyError.registryDamaged` with `.tooLarge`,
  ///   `.unsupportedVersion`, `.authenticationFailed` or `.malformed`.
  static func decode(_ bytes: [UInt8], key: SymmetricKey) throws -> [AssistantKeyID: Int64] {
    let lines = try AuthenticatedFile.open(
      bytes, header: header, headerStem: headerStem, limit: maximumFileByteCount, key: key)
    var table = [AssistantKeyID: Int64]()
    var previous: AssistantKeyID?
    for (index, line) in lines.enumerated() {
      let fields = line.split(separator: " ", omittingEmptySubsequences: false)
      guard fields.count == 2, let id = AssistantKeyID(String(fields[0])), let time = RegistryFormat.decimal(fields[1]),
        previous.map({ $0 < id }) ?? true
      else {
        throw AssistantKeyError.registryDamaged(
          .malformed(line: index + 2, reason: "not '<id> <seconds>' in ascending id order"))
      }
      table[id] = time
      previous = id
    }
    return table
  }
}
