import TaskCrypto
import TaskSystem

/// Which version a registry file is, and the two ways to read it
/// (docs/formats/registry.md): verify reads a version-2 file's header and
/// then one search at a time; `list` and every write read either version
/// whole.
enum RegistryReading {
  /// A registry opened for verify.
  enum Opened {
    /// Every key, parsed (a version-1 file, or a full read).
    case parsed(RegistryFormat.Contents)
    /// A version-2 file of which only the header was read and checked.
    case indexed(RegistryFormatV2.Header)
  }

  /// Step 1 and 2 of the version-2 reader: the size limit, then the
  /// version line; a file without it is read as version 1 (its own 16 MiB
  /// limit first). With `full`, a version-2 file is read whole too.
  ///
  /// - Throws: `AssistantKeyError.registryDamaged`.
  static func open(_ source: RegistrySource, key: SymmetricKey, floor: UInt64, full: Bool) throws -> Opened {
    guard source.size <= RegistryFormatV2.maximumFileByteCount else {
      throw AssistantKeyError.registryDamaged(
        .tooLarge(byteCount: source.size, limit: RegistryFormatV2.maximumFileByteCount))
    }
    let prefix = try source.read(0, min(source.size, RegistryFormatV2.headerByteCount))
    if RegistryFormatV2.isVersion2(prefix) {
      if full { return .parsed(try RegistryFormatV2.decode(try source.read(0, source.size), key: key, floor: floor)) }
      return .indexed(try RegistryFormatV2.openHeader(prefix: prefix, size: source.size, key: key, floor: floor))
    }
    guard source.size <= RegistryFormat.maximumFileByteCount else {
      throw AssistantKeyError.registryDamaged(
        .tooLarge(byteCount: source.size, limit: RegistryFormat.maximumFileByteCount))
    }
    let contents = try RegistryFormat.decode(try source.read(0, source.size), key: key)
    guard contents.generation >= floor else {
      throw AssistantKeyError.registryDamaged(.rolledBack(found: contents.generation, expected: floor))
    }
    return .parsed(contents)
  }

  /// Reads a whole registry file of either version, as `list` does.
  static func decode(_ bytes: [UInt8], key: SymmetricKey, floor: UInt64 = 0) throws -> RegistryFormat.Contents {
    guard case .parsed(let contents) = try open(RegistrySource(bytes), key: key, floor: floor, full: true) else {
      preconditionFailure("a full read parses every key")
    }
    return contents
  }

  /// The verify decision for `digest` in a file of either version, without
  /// the rollback check: what the vectors and the fuzzer run.
  ///
  /// - Returns: the entry, or nil (`unknown_key`).
  static func lookup(_ digest: SHA256Digest, in bytes: [UInt8], key: SymmetricKey) throws -> RegistryEntry? {
    let source = RegistrySource(bytes)
    switch try open(source, key: key, floor: 0, full: false) {
    case .parsed(let contents): return RegistryIndex(contents).entry(for: digest)
    case .indexed(let header): return try RegistryFormatV2.lookup(digest, in: source, header: header, key: key)
    }
  }
}
