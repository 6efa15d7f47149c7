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
}
