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
      // Not filtered by the registry's ids (that would read every key):
      // keys are never removed, and `list` ignores an id it does not hold.
      try files.replace(files.lastUsedPath, with: LastUsedFormat.encode(table, key: key))
    }
  }

  /// The last-used table, or an empty one when the file is missing,
  /// unreadable or refused by `LastUsedFormat.decode` for any reason.
  func readLastUsed() -> [AssistantKeyID: Int64] {
    guard let read = try? files.read(files.lastUsedPath, limit: LastUsedFormat.maximumFileByteCount),
      let table = try? LastUsedFormat.decode(read.bytes, key: key)
    else { return [:] }
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

/// The advisory last-used file, version 1 (docs/formats/last-used.md): the
/// authenticated frame with header `taskkey assistant-key last-used v1`,
/// then one line `<id> <unix seconds>` per key, strictly ascending by id,
/// and no generation line.
enum LastUsedFormat {
  static let header = "taskkey assistant-key last-used v1"
  static let headerStem = "taskkey assistant-key last-used v"
  /// The largest file read: 48 MiB, above the 41,000,085 bytes of a line
  /// (at most 41 bytes) for each of 10^6 keys with header and MAC line.
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
