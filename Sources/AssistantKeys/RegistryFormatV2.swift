import TaskCrypto

/// Random access to a registry file's bytes: the open file (`pread`) for
/// verify, or bytes in memory for vectors, tests and the fuzzer.
struct RegistrySource {
  /// The file's size in bytes.
  let size: Int
  /// Reads exactly `count` bytes at `offset` (within `size`).
  let read: (_ offset: Int, _ count: Int) throws -> [UInt8]

  /// Bytes already in memory.
  init(_ bytes: [UInt8]) {
    size = bytes.count
    read = { offset, count in Array(bytes[offset..<(offset + count)]) }
  }

  init(size: Int, read: @escaping (_ offset: Int, _ count: Int) throws -> [UInt8]) {
    self.size = size
    self.read = read
  }
}

/// The registry file, version 2 (docs/formats/registry.md): a fixed
/// header under its own MAC, an index of fixed-width entries sorted by
/// digest, and one record per key, each a version-1 key line under a MAC
/// bound to the generation and to the file's random id. Verify reads the header, O(log n) index
/// entries and one record.
enum RegistryFormatV2 {
  /// The first 34 bytes: the version-1 header stem with `2`, then LF.
  static let versionLine: [UInt8] = Array("taskkey assistant-key registry v2\n".utf8)
  static let headerByteCount = 126
  /// Where the file id (16 random bytes, fresh on every write) starts.
  static let fileIDOffset = 78
  static let fileIDByteCount = 16
  static let macOffset = 94
  static let entryByteCount = 44
  static let macByteCount = HMACSHA256.byteCount
  /// The shortest and longest record (body and MAC).
  static let recordLengths = 33...1_303
  /// The most keys one registry holds: 10^6.
  static let maximumKeyCount = 1_000_000
  /// The largest file 10^6 keys of the longest records make.
  static let maximumFileByteCount = 126 + 1_000_000 * (44 + 1_303)
  static let headerLabel: [UInt8] = Array("TaskKey registry v2 header".utf8) + [0]
  static let recordLabel: [UInt8] = Array("TaskKey registry v2 record".utf8) + [0]

  /// The authenticated header's fields.
  struct Header: Equatable {
    var generation: UInt64
    /// The file's random id, which every record MAC covers.
    var fileID: [UInt8]
    var count: Int
    var recordsOffset: Int { headerByteCount + entryByteCount * count }
  }

  /// One index entry.
  struct Entry {
    var digest: [UInt8]
    var offset: Int
    var length: Int
  }

  static func fail(_ reason: String) -> AssistantKeyError {
    .registryDamaged(.malformed(line: 0, reason: reason))
  }

  /// Whether `prefix` (the file's first bytes) starts with the version line.
  static func isVersion2(_ prefix: [UInt8]) -> Bool {
    prefix.count >= versionLine.count && prefix[0..<versionLine.count].elementsEqual(versionLine)
  }

  // MARK: - Encoding

  /// The canonical file for `contents` under `key`, with `fileID` (16
  /// bytes; a fresh random one unless a test or vector fixes it).
  static func encode(
    _ contents: RegistryFormat.Contents, key: SymmetricKey,
    fileID: [UInt8] = SecureRandom.bytes(count: fileIDByteCount)
  ) -> [UInt8] {
    precondition(fileID.count == fileIDByteCount, "a registry file id is 16 bytes")
    let entries = contents.entries.sorted { $0.digest.bytes.lexicographicallyPrecedes($1.digest.bytes) }
    let keyed = HMACSHA256(key: key)
    var generation = ByteString()
    generation.u64(contents.generation)
    var records = [[UInt8]]()
    records.reserveCapacity(entries.count)
    for entry in entries {
      let body = Array(RegistryFormat.line(for: entry).utf8)
      var mac = keyed
      mac.update(data: recordLabel)
      mac.update(data: generation.bytes)
      mac.update(data: fileID)
      mac.update(data: body)
      records.append(body + mac.finalize())
    }
    let recordsOffset = headerByteCount + entryByteCount * entries.count
    let recordsLength = records.reduce(0) { $0 + $1.count }
    var out = ByteString()
    out.bytes.reserveCapacity(recordsOffset + recordsLength)
    out.bytes += versionLine
    out.u64(contents.generation)
    out.u32(UInt32(entries.count))
    out.u64(UInt64(headerByteCount))
    out.u64(UInt64(entryByteCount * entries.count))
    out.u64(UInt64(recordsOffset))
    out.u64(UInt64(recordsLength))
    out.bytes += fileID
    var mac = keyed
    mac.update(data: headerLabel)
    mac.update(data: out.bytes)
    out.bytes += mac.finalize()
    var offset = recordsOffset
    for (entry, record) in zip(entries, records) {
      out.bytes += entry.digest.bytes
      out.u64(UInt64(offset))
      out.u32(UInt32(record.count))
      offset += record.count
    }
    for record in records { out.bytes += record }
    return out.bytes
  }

  // MARK: - Reading (steps in docs/formats/registry.md order)

  /// Steps 3–5: the header, authenticated and consistent with the size.
  /// `prefix` holds at least the first 126 bytes when the file has them.
  static func header(_ prefix: [UInt8], size: Int, key: SymmetricKey) throws -> Header {
    guard size >= headerByteCount, prefix.count >= headerByteCount else { throw fail("truncated header") }
    var mac = HMACSHA256(key: key)
    mac.update(data: headerLabel)
    mac.update(data: Array(prefix[0..<macOffset]))
    guard ConstantTime.equals(Array(prefix[macOffset..<headerByteCount]), mac.finalize()) else {
      throw AssistantKeyError.registryDamaged(.authenticationFailed)
    }
    let generation = integer(prefix, at: 34, count: 8)
    let count = integer(prefix, at: 42, count: 4)
    guard generation > 0 else { throw fail("generation 0") }
    guard count <= UInt64(maximumKeyCount) else { throw fail("more than \(maximumKeyCount) keys") }
    let fileID = Array(prefix[fileIDOffset..<(fileIDOffset + fileIDByteCount)])
    let header = Header(generation: generation, fileID: fileID, count: Int(count))
    let recordsOffset = UInt64(header.recordsOffset)
    guard integer(prefix, at: 46, count: 8) == UInt64(headerByteCount),
      integer(prefix, at: 54, count: 8) == UInt64(entryByteCount * header.count),
      integer(prefix, at: 62, count: 8) == recordsOffset,
      recordsOffset <= UInt64(size), integer(prefix, at: 70, count: 8) == UInt64(size) - recordsOffset
    else { throw fail("the header's offsets and lengths do not match the file") }
    return header
  }

  /// Steps 1–6 on a source: size, version line, header, rollback.
  static func openHeader(_ source: RegistrySource, key: SymmetricKey, floor: UInt64) throws -> Header {
    guard source.size <= maximumFileByteCount else {
      throw AssistantKeyError.registryDamaged(.tooLarge(byteCount: source.size, limit: maximumFileByteCount))
    }
    return try openHeader(
      prefix: try source.read(0, min(source.size, headerByteCount)), size: source.size, key: key, floor: floor)
  }

  /// Steps 3–6 on the file's first bytes (at most 126 of them).
  static func openHeader(prefix: [UInt8], size: Int, key: SymmetricKey, floor: UInt64) throws -> Header {
    let header = try header(prefix, size: size, key: key)
    guard header.generation >= floor else {
      throw AssistantKeyError.registryDamaged(.rolledBack(found: header.generation, expected: floor))
    }
    return header
  }

  /// Index entry `index`, read and checked against the file's bounds.
  static func entry(_ index: Int, in source: RegistrySource, header: Header) throws -> Entry {
    let bytes = try source.read(headerByteCount + entryByteCount * index, entryByteCount)
    return try checkedEntry(bytes, index: index, size: source.size, header: header)
  }

  static func checkedEntry(_ bytes: [UInt8], index: Int, size: Int, header: Header) throws -> Entry {
    let offset = integer(bytes, at: 32, count: 8)
    let length = Int(integer(bytes, at: 40, count: 4))
    guard offset >= UInt64(header.recordsOffset), recordLengths.contains(length), offset <= UInt64(size),
      UInt64(length) <= UInt64(size) - offset
    else { throw fail("index entry \(index) points outside the records") }
    return Entry(digest: Array(bytes[0..<32]), offset: Int(offset), length: length)
  }

  /// Steps 7–9 of verify: the binary search, then the one record.
  ///
  /// - Returns: the entry for `digest`, or nil (`unknown_key`).
  static func lookup(_ digest: SHA256Digest, in source: RegistrySource, header: Header, key: SymmetricKey) throws
    -> RegistryEntry?
  {
    var low = 0
    var high = header.count
    while low < high {
      let middle = low + (high - low) / 2
      let found = try entry(middle, in: source, header: header)
      if found.digest == digest.bytes {
        return try record(source.read(found.offset, found.length), digest: digest, header: header, key: key)
      }
      if found.digest.lexicographicallyPrecedes(digest.bytes) { low = middle + 1 } else { high = middle }
    }
    return nil
  }

  /// Steps 8–9: one record's MAC, canonical grammar and digest.
  static func record(_ bytes: [UInt8], digest: SHA256Digest, header: Header, key: SymmetricKey) throws
    -> RegistryEntry
  {
    var keyed = HMACSHA256(key: key)
    return try record(bytes, digest: digest, header: header, keyed: &keyed)
  }

  static func record(_ bytes: [UInt8], digest: SHA256Digest, header: Header, keyed: inout HMACSHA256) throws
    -> RegistryEntry
  {
    let body = bytes[..<(bytes.count - macByteCount)]
    var generationBytes = ByteString()
    generationBytes.u64(header.generation)
    var mac = keyed
    mac.update(data: recordLabel)
    mac.update(data: generationBytes.bytes)
    mac.update(data: header.fileID)
    mac.update(data: Array(body))
    guard ConstantTime.equals(Array(bytes[body.count...]), mac.finalize()) else {
      throw AssistantKeyError.registryDamaged(.authenticationFailed)
    }
    guard body.allSatisfy({ (0x20...0x7e).contains($0) }) else { throw fail("a record is not ASCII") }
    let text = String(decoding: body, as: UTF8.self)
    guard let entry = RegistryFormat.parseEntry(Substring(text)), RegistryFormat.line(for: entry) == text else {
      throw fail("a record is not a canonical key line")
    }
    guard entry.digest == digest else { throw fail("an index entry points at another key's record") }
    return entry
  }

  // MARK: - Full read

  /// The full read of `list` and every write: steps 1–6, every index
  /// entry, then every record.
  static func decode(_ bytes: [UInt8], key: SymmetricKey, floor: UInt64 = 0) throws -> RegistryFormat.Contents {
    let source = RegistrySource(bytes)
    let header = try openHeader(source, key: key, floor: floor)
    var entries = [Entry]()
    entries.reserveCapacity(header.count)
    var expected = header.recordsOffset
    for index in 0..<header.count {
      let start = headerByteCount + entryByteCount * index
      let entry = try checkedEntry(
        Array(bytes[start..<(start + entryByteCount)]), index: index, size: bytes.count, header: header)
      guard entry.offset == expected else { throw fail("index entry \(index): records are not contiguous") }
      if let previous = entries.last, !previous.digest.lexicographicallyPrecedes(entry.digest) {
        throw fail("index entry \(index): digests are not strictly ascending")
      }
      expected += entry.length
      entries.append(entry)
    }
    guard expected == bytes.count else { throw fail("the records do not end at the end of the file") }
    var keyed = HMACSHA256(key: key)
    var parsed = [RegistryEntry]()
    parsed.reserveCapacity(header.count)
    var ids = Set<AssistantKeyID>(minimumCapacity: header.count)
    for entry in entries {
      let digest = SHA256Digest(bytes: entry.digest)!
      let record = Array(bytes[entry.offset..<(entry.offset + entry.length)])
      let item = try Self.record(record, digest: digest, header: header, keyed: &keyed)
      guard ids.insert(item.id).inserted else { throw fail("two records share an id") }
      parsed.append(item)
    }
    return RegistryFormat.Contents(generation: header.generation, entries: parsed)
  }

  static func integer(_ bytes: [UInt8], at offset: Int, count: Int) -> UInt64 {
    bytes[offset..<(offset + count)].reduce(0) { $0 << 8 | UInt64($1) }
  }
}

/// Appends big-endian integers.
struct ByteString {
  var bytes = [UInt8]()

  mutating func u32(_ value: UInt32) { append(UInt64(value), count: 4) }
  mutating func u64(_ value: UInt64) { append(value, count: 8) }

  private mutating func append(_ value: UInt64, count: Int) {
    for shift in stride(from: (count - 1) * 8, through: 0, by: -8) {
      bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
    }
  }
}
