import FoundationEssentials
import TaskCrypto

/// One item as held in a decrypted store.
struct StoredItem {
  var name: String
  var label: String
  var itemClass: VaultItemClass
  var created: Int64
  var modified: Int64
  var value: ItemValue

  var attributes: VaultItemAttributes {
    VaultItemAttributes(
      name: name, label: label, itemClass: itemClass,
      created: Date(timeIntervalSince1970: TimeInterval(created)),
      modified: Date(timeIntervalSince1970: TimeInterval(modified)))
  }
}

extension StoredItem {
  /// An item whose value has a locked buffer of its own (a new value).
  init(name: String, label: String, itemClass: VaultItemClass, created: Int64, modified: Int64, value: SecureBytes) {
    self.init(
      name: name, label: label, itemClass: itemClass, created: created, modified: modified, value: ItemValue(value))
  }
}

/// An item's value: a run of bytes inside a locked buffer. The items read
/// from a store all point into that store's one decrypted plaintext, so a
/// store of N items takes one locked mapping, not N (one `sodium_malloc`
/// costs a mapping, guard pages and `mlock`, about 27 µs, and a process
/// may hold only so many mappings). A value set by the caller has a buffer
/// of its own until the store is written.
struct ItemValue {
  /// The locked buffer the value lives in; kept alive by every item in it.
  let region: SecureBytes
  let offset: Int
  /// The value's length in bytes.
  let count: Int

  /// The whole of `bytes`.
  init(_ bytes: SecureBytes) {
    self.init(region: bytes, offset: 0, count: bytes.count)
  }

  /// `count` bytes of `region` from `offset` (within its bounds).
  init(region: SecureBytes, offset: Int, count: Int) {
    precondition(offset >= 0 && count >= 0 && offset + count <= region.count, "a value outside its region")
    self.region = region
    self.offset = offset
    self.count = count
  }

  /// Calls `body` with the value's bytes; the pointer must not escape.
  func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
    try region.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
  }

  /// The value in a locked buffer of its own, for a caller that keeps it
  /// (`VaultItem.value`).
  ///
  /// - Throws: `TaskVaultError.crypto` when locked memory is refused.
  func copied() throws -> SecureBytes {
    try withUnsafeBytes { raw in try wrapCrypto { try SecureBytes(copying: raw) } }
  }
}

/// The plaintext of a store (SECURITY.md, "Store plaintext").
struct StoreContents {
  var keyring: Keyring?
  var items: [StoredItem]  // sorted by name bytes, unique
  /// Ids of retired note keys (tombstones), ascending, none in `keyring`;
  /// synchronisable store and bundles only.
  var retired: [KeyID] = []

  /// The tag that opens the retired-key section.
  static let retiredTag: [UInt8] = Array("RTRD".utf8)

  /// Remembers `ids` as retired, keeping the list sorted and unique.
  mutating func remember(retired ids: [KeyID]) {
    retired = Array(Set(retired + ids)).sorted()
  }

  /// The position of the item `name` (items are sorted by name bytes):
  /// a binary search, so a lookup in 10,000 items is 14 comparisons.
  func index(of name: String) -> Int? {
    var low = 0
    var high = items.count
    while low < high {
      let middle = (low + high) / 2
      let candidate = items[middle].name
      if candidate == name { return middle }
      if candidate.utf8.lexicographicallyPrecedes(name.utf8) { low = middle + 1 } else { high = middle }
    }
    return nil
  }

  /// The note keyring, which the synchronisable store always holds.
  ///
  /// - Throws: `TaskVaultError.damaged` naming `path` when it is missing.
  func noteKeyring(path: String) throws -> Keyring {
    guard let keyring else {
      throw TaskVaultError.damaged(path: path, reason: "the synchronisable store has no keyring")
    }
    return keyring
  }

  mutating func put(_ item: StoredItem) {
    if let index = index(of: item.name) {
      items[index] = item
    } else {
      let position = items.firstIndex { item.name.utf8.lexicographicallyPrecedes($0.name.utf8) } ?? items.count
      items.insert(item, at: position)
    }
  }

  /// Encodes into locked memory, zero-padded to a multiple of 512 bytes.
  func encode() throws -> SecureBytes {
    let keys = keyring?.keys ?? []
    guard keys.count <= VaultLimits.maximumKeyCount else {
      throw TaskVaultError.storeFull(reason: "more than \(VaultLimits.maximumKeyCount) note keys")
    }
    guard items.count <= VaultLimits.maximumItemCount else {
      throw TaskVaultError.storeFull(reason: "more than \(VaultLimits.maximumItemCount) items")
    }
    guard retired.count <= VaultLimits.maximumRetiredKeyCount else {
      throw TaskVaultError.storeFull(reason: "more than \(VaultLimits.maximumRetiredKeyCount) retired key ids")
    }
    var size = 8 + keys.count * 36 + 4 + (retired.isEmpty ? 0 : 8 + 4 * retired.count)
    for item in items {
      size += 1 + 1 + item.name.utf8.count + 2 + item.label.utf8.count + 8 + 8 + 4 + item.value.count
    }
    let block = VaultLimits.paddingBlock
    let total = max((size + block - 1) / block * block, block)
    guard total <= VaultLimits.maximumStoreByteCount else {
      throw TaskVaultError.storeFull(reason: "the store would exceed \(VaultLimits.maximumStoreByteCount) bytes")
    }
    let output = try wrapCrypto { try SecureBytes(zeroedCount: total) }
    output.withUnsafeMutableBytes { out in
      var offset = 0
      func put(_ value: UInt64, _ count: Int) {
        for index in 0..<count {
          out[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * (count - 1 - index)))
        }
        offset += count
      }
      func put(_ raw: UnsafeRawBufferPointer) {
        if raw.count > 0 {
          out.baseAddress!.advanced(by: offset).copyMemory(from: raw.baseAddress!, byteCount: raw.count)
        }
        offset += raw.count
      }
      put(UInt64(keys.count), 4)
      put(UInt64(keyring?.primaryID.rawValue ?? 0), 4)
      for key in keys {
        put(UInt64(key.id.rawValue), 4)
        key.key.withUnsafeBytes { put($0) }
      }
      put(UInt64(items.count), 4)
      for item in items {
        put(UInt64(item.itemClass.rawValue), 1)
        put(UInt64(item.name.utf8.count), 1)
        Array(item.name.utf8).withUnsafeBytes { put($0) }
        put(UInt64(item.label.utf8.count), 2)
        Array(item.label.utf8).withUnsafeBytes { put($0) }
        put(UInt64(bitPattern: item.created), 8)
        put(UInt64(bitPattern: item.modified), 8)
        put(UInt64(item.value.count), 4)
        item.value.withUnsafeBytes { put($0) }
      }
      if !retired.isEmpty {
        Self.retiredTag.withUnsafeBytes { put($0) }
        put(UInt64(retired.count), 4)
        for id in retired { put(UInt64(id.rawValue), 4) }
      }
    }
    return output
  }

  /// Decodes a store plaintext strictly: every count and length within its
  /// limit, names valid and strictly ascending, classes matching the store,
  /// padding all zero.
  static func decode(_ plaintext: SecureBytes, store: StoreID) throws -> StoreContents {
    try plaintext.withUnsafeBytes { buffer in
      guard buffer.count % VaultLimits.paddingBlock == 0, buffer.count >= VaultLimits.paddingBlock else {
        throw ParseFailure("plaintext length \(buffer.count) is not a multiple of 512")
      }
      var reader = ByteReader(buffer)
      let keyCount = Int(try reader.u32("key count"))
      let primaryRaw = try reader.u32("primary key id")
      var keyring: Keyring?
      switch store {
      case .deviceOnly:
        guard keyCount == 0, primaryRaw == 0 else { throw ParseFailure("the device-only store holds note keys") }
      case .synchronisable:
        guard keyCount >= 1, keyCount <= VaultLimits.maximumKeyCount else {
          throw ParseFailure("key count \(keyCount) outside 1...\(VaultLimits.maximumKeyCount)")
        }
        var keys = [NoteKey]()
        for _ in 0..<keyCount {
          let id = KeyID(rawValue: try reader.u32("key id"))
          let key = try wrapCrypto { try SymmetricKey(copying: try reader.take(32, "key")) }
          keys.append(NoteKey(id: id, key: key))
        }
        do {
          keyring = try Keyring(keys: keys, primaryID: KeyID(rawValue: primaryRaw))
        } catch {
          throw ParseFailure("the keyring is inconsistent (duplicate id or unknown primary)")
        }
      }
      let itemCount = Int(try reader.u32("item count"))
      guard itemCount <= VaultLimits.maximumItemCount else {
        throw ParseFailure("item count \(itemCount) exceeds \(VaultLimits.maximumItemCount)")
      }
      var items = [StoredItem]()
      items.reserveCapacity(itemCount)
      var previous: UnsafeRawBufferPointer?
      for _ in 0..<itemCount {
        guard try reader.u8("item class") == store.itemClass.rawValue else {
          throw ParseFailure("an item's class does not match the \(store.name)")
        }
        // Checked in place, without a copy per name: a store holds up to
        // 10,000 items and every open reads them all.
        let nameBytes = try reader.take(Int(try reader.u8("name length")), "name")
        guard isValidItemName(nameBytes) else { throw ParseFailure("an invalid item name") }
        if let previous, !previous.lexicographicallyPrecedes(nameBytes) {
          throw ParseFailure("item names not strictly ascending")
        }
        previous = nameBytes
        let name = String(decoding: nameBytes, as: UTF8.self)
        let labelLength = Int(try reader.u16("label length"))
        guard labelLength <= VaultLimits.maximumLabelByteCount else { throw ParseFailure("a label is too long") }
        let labelBytes = try reader.take(labelLength, "label")
        let label: String
        if labelBytes.allSatisfy({ (0x20...0x7e).contains($0) }) {
          // Printable ASCII: valid UTF-8 that holds no refused scalar.
          label = String(decoding: labelBytes, as: UTF8.self)
        } else {
          guard let text = String(validating: labelBytes, as: UTF8.self) else {
            throw ParseFailure("a label is not UTF-8")
          }
          do { try validateLabel(text) } catch { throw ParseFailure("an invalid label") }
          label = text
        }
        let created = Int64(bitPattern: try reader.u64("created"))
        let modified = Int64(bitPattern: try reader.u64("modified"))
        let valueLength = Int(try reader.u32("value length"))
        guard valueLength <= VaultLimits.maximumValueByteCount else { throw ParseFailure("a value is too long") }
        // The value stays where it is, in the store's one locked buffer.
        let valueOffset = reader.offset
        _ = try reader.take(valueLength, "value")
        let value = ItemValue(region: plaintext, offset: valueOffset, count: valueLength)
        items.append(
          StoredItem(
            name: name, label: label, itemClass: store.itemClass, created: created, modified: modified, value: value))
      }
      let retired = try decodeRetired(&reader, store: store, keyring: keyring)
      let padding = try reader.take(reader.remaining, "padding")
      guard padding.count < VaultLimits.paddingBlock, padding.allSatisfy({ $0 == 0 }) else {
        throw ParseFailure("padding is not zero or longer than one block")
      }
      return StoreContents(keyring: keyring, items: items, retired: retired)
    }
  }
}

/// Both stores of an open vault, reached by `StoreID`.
struct Stores {
  var synchronisable: StoreContents
  var deviceOnly: StoreContents

  /// The store `id`.
  subscript(id: StoreID) -> StoreContents {
    get { id == .synchronisable ? synchronisable : deviceOnly }
    set {
      if id == .synchronisable { synchronisable = newValue } else { deviceOnly = newValue }
    }
  }

  /// The store that holds the item `name`, if any.
  func store(holding name: String) -> StoreID? {
    StoreID.allCases.first { self[$0].index(of: name) != nil }
  }

  /// Every item of both stores, sorted by name bytes (a merge of the two
  /// sorted stores).
  var sortedItems: [StoredItem] {
    let first = synchronisable.items
    let second = deviceOnly.items
    var merged = [StoredItem]()
    merged.reserveCapacity(first.count + second.count)
    var left = 0
    var right = 0
    while left < first.count, right < second.count {
      if first[left].name.utf8.lexicographicallyPrecedes(second[right].name.utf8) {
        merged.append(first[left])
        left += 1
      } else {
        merged.append(second[right])
        right += 1
      }
    }
    merged += first[left...]
    merged += second[right...]
    return merged
  }
}

extension StoreContents {
  /// Reads the optional retired-key section: "RTRD", u32 R (1...4096), R
  /// ids strictly ascending, none of them in the keyring. Absent when the
  /// next bytes are not the tag (they are then padding).
  static func decodeRetired(_ reader: inout ByteReader, store: StoreID, keyring: Keyring?) throws -> [KeyID] {
    guard reader.remaining >= 4, reader.peek(4) == retiredTag else { return [] }
    guard store == .synchronisable else { throw ParseFailure("the device-only store holds retired key ids") }
    _ = try reader.take(4, "retired tag")
    let count = Int(try reader.u32("retired key count"))
    guard count >= 1, count <= VaultLimits.maximumRetiredKeyCount else {
      throw ParseFailure("retired key count \(count) outside 1...\(VaultLimits.maximumRetiredKeyCount)")
    }
    var ids = [KeyID]()
    for _ in 0..<count {
      let id = KeyID(rawValue: try reader.u32("retired key id"))
      if let last = ids.last, !(last < id) { throw ParseFailure("retired key ids not strictly ascending") }
      guard keyring?.key(for: id) == nil else { throw ParseFailure("a retired key id is still in the keyring") }
      ids.append(id)
    }
    return ids
  }
}
