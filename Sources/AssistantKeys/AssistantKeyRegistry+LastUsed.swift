import Foundation
import TaskCrypto

extension AssistantKeyRegistry {
  // MARK: - Last used (advisory)

  /// Records a use, coalesced: skipped when this process or the file shows
  /// a use of this key less than `lastUsedResolution` ago. Failures are
  /// ignored; the last-used file never decides a verify.
  func recordUse(of id: AssistantKeyID, at now: Int64) {
    if let known = lastUsedKnown[id], known <= now, now - known < Self.lastUsedResolution { return }
    lastUsedKnown[id] = now
    try? files.withLock {
      var table = readLastUsed()
      if let stored = table[id], stored <= now, now - stored < Self.lastUsedResolution {
        lastUsedKnown[id] = stored
        return
      }
      table[id] = now
      let live = Set(snapshot.contents.entries.map(\.id))
      let lines = table.filter { live.contains($0.key) }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
      try files.replace(
        files.lastUsedPath, with: AuthenticatedFile.seal(header: LastUsedFormat.header, lines: lines, key: key))
    }
  }

  /// The last-used table, or an empty one when the file is missing,
  /// unreadable or fails its integrity check.
  func readLastUsed() -> [AssistantKeyID: Int64] {
    guard let read = try? files.read(files.lastUsedPath, limit: RegistryFormat.maximumFileByteCount),
      let lines = try? AuthenticatedFile.open(
        read.bytes, header: LastUsedFormat.header, headerStem: LastUsedFormat.headerStem,
        limit: RegistryFormat.maximumFileByteCount, key: key)
    else { return [:] }
    var table = [AssistantKeyID: Int64]()
    for line in lines {
      let fields = line.split(separator: " ", omittingEmptySubsequences: false)
      guard fields.count == 2, let id = AssistantKeyID(String(fields[0])), let time = RegistryFormat.decimal(fields[1])
      else { return [:] }
      table[id] = time
    }
    return table
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

/// The advisory last-used file, version 1: the authenticated frame with
/// header `taskkey assistant-key last-used v1` and lines `<id> <unix seconds>`
/// sorted by id.
enum LastUsedFormat {
  static let header = "taskkey assistant-key last-used v1"
  static let headerStem = "taskkey assistant-key last-used v"
}
