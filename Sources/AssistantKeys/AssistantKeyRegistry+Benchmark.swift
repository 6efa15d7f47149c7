import Foundation
import TaskCrypto

extension AssistantKeyRegistry {
  /// A benchmark fixture (`taskkey-bench`, issue 14): registers `count` new
  /// keys named `<prefix>-<n>`, standard trust, no grants, no expiry, in
  /// one durable write, as `count` mints would. A registry of 10,000 keys
  /// made by `mint` would take 10,000 rewrites of a growing file.
  ///
  /// - Parameters:
  ///   - count: how many keys; the registry's limit still holds.
  ///   - prefix: the names' stem, a valid assistant name.
  /// - Returns: the new keys (never stored; they are shown to the caller
  ///   once, like `mint`'s).
  /// - Throws: `AssistantKeyError.invalidName`, `.registryFull`, and the
  ///   errors of `mint`.
  @_spi(Benchmark) public func mintMany(count: Int, prefix: String) throws -> [AssistantKey] {
    _ = try Self.validated(name: prefix + "-\(count)", grants: [])
    let keys = try (0..<count).map { _ in try AssistantKey.generate() }
    return try locked {
      try mutateHoldingMutex { contents, now in
        guard contents.entries.count + count <= Self.maximumKeyCount else {
          throw AssistantKeyError.registryFull(limit: Self.maximumKeyCount)
        }
        var seenIDs = Set(contents.entries.map(\.id))
        var seenDigests = Set(contents.entries.map(\.digest))
        for (index, key) in keys.enumerated() {
          guard seenIDs.insert(key.id).inserted, seenDigests.insert(key.digest).inserted else {
            throw AssistantKeyError.idCollision
          }
          contents.entries.append(
            RegistryEntry(
              id: key.id, digest: key.digest, created: now, expires: nil, revocation: .none, trust: .standard,
              name: prefix + "-\(index)", grants: []))
        }
        return keys
      }
    }
  }

  /// A benchmark fixture for registries of up to 10^6 keys: adds `count`
  /// active keys named `<prefix>-<n>` whose digests are random (no key
  /// string exists for them, so none can verify) in one durable write.
  /// Unlike `mintMany` it makes no key in locked memory, so a million
  /// costs seconds, not a million locked pages.
  ///
  /// - Parameters:
  ///   - count: how many entries; the registry's limit still holds.
  ///   - prefix: the names' stem, a valid assistant name.
  /// - Throws: `AssistantKeyError.invalidName`, `.registryFull`,
  ///   `.idCollision`, and the errors of `mint`'s write.
  @_spi(Benchmark) public func addFillerKeys(count: Int, prefix: String) throws {
    _ = try Self.validated(name: prefix + "-\(count)", grants: [])
    try locked {
      try mutateHoldingMutex { contents, now in
        guard contents.entries.count + count <= Self.maximumKeyCount else {
          throw AssistantKeyError.registryFull(limit: Self.maximumKeyCount)
        }
        var seen = Set(contents.entries.map(\.id))
        for index in 0..<count {
          let digest = SHA256Digest(bytes: SecureRandom.bytes(count: 32))!
          let id = AssistantKeyID(digest: digest)
          guard seen.insert(id).inserted else { throw AssistantKeyError.idCollision }
          contents.entries.append(
            RegistryEntry(
              id: id, digest: digest, created: now, expires: nil, revocation: .none, trust: .standard,
              name: prefix + "-\(index)", grants: []))
        }
      }
    }
  }
}

extension AssistantKeyRegistry {
  /// A benchmark fixture: marks every registry key used at `time` in one
  /// write of the last-used file, as version 2 (what registry writes
  /// make) or, with `version1`, as the version-1 file a verify reads and
  /// rewrites whole (the cost before version 2, for comparison).
  ///
  /// - Throws: the errors of reading the registry and of the write.
  @_spi(Benchmark) public func markEveryKeyUsed(at time: Int64, version1: Bool = false) throws {
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
