import TaskCrypto

/// AssistantKeys' package seams: the readers that `verify`, `list` and the
/// last-used file run, over bytes in memory, so that the vectors target
/// (`Sources/TaskKeyVectors`, which `taskkey vectors check` and the tests
/// link) decides every registry and last-used vector with the very code
/// the registry uses, without files. `package`, not `public`: only modules
/// of the TaskKey package can call them; an app that links AssistantKeys
/// cannot (ARCHITECTURE.md, "Package seams").
package enum AssistantKeyReaders {
  /// Verify's decision for `digest` in a registry file of either version
  /// (a file that starts with the version-2 line is read as version 2,
  /// docs/formats/registry.md), with the generation the vault remembers.
  ///
  /// - Parameters:
  ///   - digest: SHA-256 of the presented key string.
  ///   - registry: the registry file's bytes.
  ///   - integrityKey: the registry's integrity key.
  ///   - floor: the generation the vault remembers (0: none).
  ///   - now: seconds since 1970.
  /// - Returns: the identity, or nil when no key has the digest (`unknown_key`).
  /// - Throws: `AssistantKeyError.registryDamaged`, `.revoked`, `.expired`.
  package static func verify(
    _ digest: SHA256Digest, registry: [UInt8], integrityKey: SymmetricKey, floor: UInt64, now: Int64
  ) throws -> AssistantIdentity? {
    let source = RegistrySource(registry)
    let entry: RegistryEntry?
    switch try RegistryReading.open(source, key: integrityKey, floor: floor, full: false) {
    case .parsed(let contents): entry = RegistryIndex(contents).entry(for: digest)
    case .indexed(let header):
      entry = try RegistryFormatV2.lookup(digest, in: source, header: header, key: integrityKey)
    }
    return try entry?.verdict(at: now)
  }

  /// The full read of a registry file of either version, as `list` and
  /// every write do.
  ///
  /// - Throws: `AssistantKeyError.registryDamaged`.
  package static func readWhole(registry: [UInt8], integrityKey: SymmetricKey, floor: UInt64) throws {
    _ = try RegistryReading.decode(registry, key: integrityKey, floor: floor)
  }

  /// The full read of a last-used file of either version, as `list` does:
  /// the keys used, by public id.
  ///
  /// - Throws: `AssistantKeyError.registryDamaged`.
  package static func readLastUsed(_ bytes: [UInt8], integrityKey: SymmetricKey) throws -> [AssistantKeyID: Int64] {
    LastUsedFormatV2.isVersion2(bytes)
      ? try LastUsedFormatV2.decode(bytes, key: integrityKey) : try LastUsedFormat.decode(bytes, key: integrityKey)
  }

  /// What verify's search of a version-2 last-used file finds for one id.
  package enum LastUsedSearch: Equatable {
    /// The header is refused: nothing is read or written.
    case refused
    /// The file has no slot for the id.
    case absent
    /// The slot's MAC fails or its time is out of range: never used.
    case never
    /// Used at the time (seconds since 1970).
    case used(Int64)
  }

  /// Verify's search of a version-2 last-used file for `id`
  /// (docs/formats/last-used.md, steps 1 to 6).
  package static func searchLastUsed(_ bytes: [UInt8], id: AssistantKeyID, integrityKey: SymmetricKey)
    -> LastUsedSearch
  {
    let prefix = Array(bytes.prefix(LastUsedFormatV2.headerByteCount))
    guard let count = try? LastUsedFormatV2.header(prefix, size: bytes.count, key: integrityKey) else {
      return .refused
    }
    let source = RegistrySource(bytes)
    guard let found = try? LastUsedFormatV2.find(LastUsedFormatV2.idValue(id), in: source, count: count) else {
      return .absent
    }
    guard let time = LastUsedFormatV2.time(ofSlot: found.slot[...], keyed: HMACSHA256(key: integrityKey)) else {
      return .never
    }
    return .used(time)
  }

  /// The key string minted from 32 chosen "random" bytes, with the
  /// encoder `mint` uses: the seam that reproduces a key vector.
  ///
  /// - Throws: `AssistantKeyError.crypto` when locked memory is refused.
  package static func key(randomBytes: UnsafeRawBufferPointer) throws -> AssistantKey {
    try AssistantKey(randomBytes: randomBytes)
  }

  /// CRC-32 (IEEE 802.3, as zlib) of `bytes`: the checksum in a key string.
  package static func crc32(_ bytes: UnsafeRawBufferPointer) -> UInt32 { CRC32.checksum(bytes) }
}
