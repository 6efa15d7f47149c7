import TaskCrypto

/// The advisory last-used file, version 2 (docs/formats/last-used.md): a
/// header under its own MAC, then one fixed-width slot per registry key,
/// sorted by id, each `id || time || MAC(id, time)`. A verify binary-searches
/// its key's slot and rewrites that slot's time and MAC in place, so it
/// touches O(log n) bytes; registry writes rebuild the file.
enum LastUsedFormatV2 {
  /// The first 35 bytes: the version-1 header with `2`, then LF.
  static let versionLine: [UInt8] = Array("taskkey assistant-key last-used v2\n".utf8)
  static let countOffset = 35
  static let macOffset = 39
  static let headerByteCount = 71
  /// id (8) || time (8) || MAC (32).
  static let slotByteCount = 48
  static let macByteCount = HMACSHA256.byteCount
  /// One slot per registry key: at most the registry's 10^6.
  static let maximumSlotCount = 1_000_000
  static let maximumFileByteCount = 71 + 48 * 1_000_000
  static let headerLabel: [UInt8] = Array("TaskKey last-used v2 header".utf8) + [0]
  static let slotLabel: [UInt8] = Array("TaskKey last-used v2 slot".utf8) + [0]
  /// Times at or above this read as never used (the registry's numbers are below 10^18).
  static let timeLimit: UInt64 = 1_000_000_000_000_000_000

  static func fail(_ reason: String) -> AssistantKeyError { RegistryFormatV2.fail(reason) }

  /// Whether the file's first bytes start with the version line.
  static func isVersion2(_ prefix: [UInt8]) -> Bool {
    prefix.count >= versionLine.count && prefix[0..<versionLine.count].elementsEqual(versionLine)
  }

  /// The 8 bytes a slot stores for `id`: its 16 hex digits, decoded.
  static func idValue(_ id: AssistantKeyID) -> UInt64 {
    id.text.utf8.dropFirst(AssistantKeyID.prefix.utf8.count).reduce(0) { value, digit in
      value << 4 | UInt64(digit <= 0x39 ? digit - 0x30 : digit - 0x61 + 10)
    }
  }

  /// The public id a slot's 8 id bytes name.
  static func id(_ value: UInt64) -> AssistantKeyID {
    let digits = Array("0123456789abcdef".utf8)
    let hex = (0..<16).map { digits[Int((value >> UInt64(60 - 4 * $0)) & 0xf)] }
    return AssistantKeyID(AssistantKeyID.prefix + String(decoding: hex, as: UTF8.self))!
  }

  /// The 40 bytes after a slot's id: `time || MAC(label || id || time)`.
  static func stamp(id: UInt64, time: UInt64, keyed: HMACSHA256) -> [UInt8] {
    var fields = ByteString()
    fields.u64(id)
    fields.u64(time)
    var mac = keyed
    mac.update(data: slotLabel)
    mac.update(data: fields.bytes)
    return Array(fields.bytes[8...]) + mac.finalize()
  }

  /// The time a slot (48 bytes) records, or nil (never used) when its MAC
  /// fails — a torn or forged slot — or its time is 0 or not below 10^18.
  static func time(ofSlot slot: ArraySlice<UInt8>, keyed: HMACSHA256) -> Int64? {
    let start = slot.startIndex
    var mac = keyed
    mac.update(data: slotLabel)
    mac.update(data: Array(slot[start..<(start + 16)]))
    guard ConstantTime.equals(Array(slot[(start + 16)..<(start + 48)]), mac.finalize()) else { return nil }
    let time = RegistryFormatV2.integer(Array(slot[(start + 8)..<(start + 16)]), at: 0, count: 8)
    guard time > 0, time < timeLimit else { return nil }
    return Int64(time)
  }

  /// The file for `slots` (ids strictly ascending; each the 40 bytes after
  /// the id, or nil for never used, written as zeros) under `key`.
  static func encode(_ slots: [(id: UInt64, stamp: ArraySlice<UInt8>?)], key: SymmetricKey) -> [UInt8] {
    var out = ByteString(bytes: versionLine)
    out.u32(UInt32(slots.count))
    var mac = HMACSHA256(key: key)
    mac.update(data: headerLabel)
    mac.update(data: out.bytes)
    out.bytes += mac.finalize()
    out.bytes.reserveCapacity(headerByteCount + slotByteCount * slots.count)
    let never = [UInt8](repeating: 0, count: slotByteCount - 8)
    for slot in slots {
      out.u64(slot.id)
      out.bytes += slot.stamp ?? never[...]
    }
    return out.bytes
  }

  // MARK: - Reading (steps in docs/formats/last-used.md order)

  /// Steps 1–5: size, version line, header MAC, count and size.
  ///
  /// - Returns: the slot count.
  static func header(_ prefix: [UInt8], size: Int, key: SymmetricKey) throws -> Int {
    guard size <= maximumFileByteCount else {
      throw AssistantKeyError.registryDamaged(.tooLarge(byteCount: size, limit: maximumFileByteCount))
    }
    guard isVersion2(prefix) else { throw fail("not a version-2 last-used file") }
    guard size >= headerByteCount, prefix.count >= headerByteCount else { throw fail("truncated header") }
    var mac = HMACSHA256(key: key)
    mac.update(data: headerLabel)
    mac.update(data: Array(prefix[0..<macOffset]))
    guard ConstantTime.equals(Array(prefix[macOffset..<headerByteCount]), mac.finalize()) else {
      throw AssistantKeyError.registryDamaged(.authenticationFailed)
    }
    let count = Int(RegistryFormatV2.integer(prefix, at: countOffset, count: 4))
    guard count <= maximumSlotCount else { throw fail("more than \(maximumSlotCount) slots") }
    guard size == headerByteCount + slotByteCount * count else { throw fail("the size does not match the count") }
    return count
  }

  /// Step 6 of verify: the binary search for `id`.
  ///
  /// - Returns: the slot's index and its 48 bytes, or nil when absent.
  static func find(_ id: UInt64, in source: RegistrySource, count: Int) throws -> (index: Int, slot: [UInt8])? {
    var low = 0
    var high = count
    while low < high {
      let middle = low + (high - low) / 2
      let slot = try source.read(headerByteCount + slotByteCount * middle, slotByteCount)
      let found = RegistryFormatV2.integer(slot, at: 0, count: 8)
      if found == id { return (middle, slot) }
      if found < id { low = middle + 1 } else { high = middle }
    }
    return nil
  }

  /// The full read of `list` and of every registry write: the header,
  /// then ids strictly ascending; each slot's time or never. Without
  /// `checkingMACs` (a rebuild, which copies slots verbatim: a slot whose
  /// MAC fails still fails after the copy) every time is nil.
  ///
  /// - Returns: the slots in file order, id and time (nil: never used).
  static func slots(_ bytes: [UInt8], key: SymmetricKey, checkingMACs: Bool = true) throws -> [(
    id: UInt64, time: Int64?, stamp: ArraySlice<UInt8>
  )] {
    let count = try header(bytes, size: bytes.count, key: key)
    let keyed = HMACSHA256(key: key)
    var slots = [(id: UInt64, time: Int64?, stamp: ArraySlice<UInt8>)]()
    slots.reserveCapacity(count)
    for index in 0..<count {
      let start = headerByteCount + slotByteCount * index
      let id = RegistryFormatV2.integer(bytes, at: start, count: 8)
      if let previous = slots.last, previous.id >= id { throw fail("slot \(index): ids are not strictly ascending") }
      let slot = bytes[start..<(start + slotByteCount)]
      slots.append((id, checkingMACs ? time(ofSlot: slot, keyed: keyed) : nil, slot.dropFirst(8)))
    }
    return slots
  }

  /// The full read as a table of the keys used (`list`).
  static func decode(_ bytes: [UInt8], key: SymmetricKey) throws -> [AssistantKeyID: Int64] {
    var table = [AssistantKeyID: Int64]()
    for slot in try slots(bytes, key: key) {
      if let time = slot.time { table[id(slot.id)] = time }
    }
    return table
  }
}
