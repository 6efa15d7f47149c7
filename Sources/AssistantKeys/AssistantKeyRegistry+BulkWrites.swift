import FoundationEssentials
import TaskCrypto

extension AssistantKeyRegistry {
  /// Package seam for `taskkey-bench` (its fixtures are in
  /// `Sources/taskkey-bench/Fixtures.swift`): adds one active entry per
  /// name, standard trust, no grants, no expiry, whose digest is random (no
  /// key string exists for it, so none can verify), in one durable write.
  /// A registry of 10^6 keys made by `mint` would take 10^6 rewrites of a
  /// growing file and 10^6 keys in locked memory. `package`, not `public`:
  /// no app can fill a registry with keys nobody holds.
  ///
  /// - Parameter names: the entries' names, each a valid assistant name;
  ///   the registry's limit still holds.
  /// - Throws: `AssistantKeyError.invalidName`, `.registryFull`,
  ///   `.idCollision`, and the errors of `mint`'s write.
  package func addUnverifiableEntries(named names: [String]) throws {
    for name in names { _ = try Self.validated(name: name, grants: []) }
    try locked {
      try mutateHoldingMutex { contents, now in
        guard contents.entries.count + names.count <= Self.maximumKeyCount else {
          throw AssistantKeyError.registryFull(limit: Self.maximumKeyCount)
        }
        var seen = Set(contents.entries.map(\.id))
        for name in names {
          let digest = SHA256Digest(bytes: SecureRandom.bytes(count: 32))!
          let id = AssistantKeyID(digest: digest)
          guard seen.insert(id).inserted else { throw AssistantKeyError.idCollision }
          contents.entries.append(
            RegistryEntry(
              id: id, digest: digest, created: now, expires: nil, revocation: .none, trust: .standard, name: name,
              grants: []))
        }
      }
    }
  }

  /// Package seam for `taskkey-bench`: marks every registry key used at
  /// `time` in one write of the last-used file, as version 2 (what
  /// registry writes make) or, with `version1`, as the version-1 file a
  /// verify reads and rewrites whole (the cost before version 2, for
  /// comparison). `package`: no app writes a last-used table it did not
  /// observe.
  ///
  /// - Throws: the errors of reading the registry and of the write.
  package func markEveryKeyUsed(at time: Int64, version1: Bool = false) throws {
    try locked {
      try files.withLock {
        try refresh(full: true)
        let ids = snapshot.contents.entries.map(\.id)
        let bytes: [UInt8]
        if version1 {
          bytes = LastUsedFormat.encode(Dictionary(uniqueKeysWithValues: ids.map { ($0, time) }), key: key)
        } else {
          let keyed = HMACSHA256(key: key)
          bytes = LastUsedFormatV2.encode(
            ids.map(LastUsedFormatV2.idValue).sorted().map {
              ($0, LastUsedFormatV2.stamp(id: $0, time: UInt64(time), keyed: keyed)[...])
            }, key: key)
        }
        try files.replace(files.lastUsedPath, with: bytes)
      }
    }
  }
}
