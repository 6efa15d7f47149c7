import Foundation
import TaskCrypto

/// A structural defect found while parsing; mapped to `.damaged`.
struct ParseFailure: Error {
  let reason: String
  init(_ reason: String) { self.reason = reason }
}

/// Appends big-endian integers and bytes.
struct ByteWriter {
  var bytes = [UInt8]()

  mutating func u8(_ value: UInt8) { bytes.append(value) }
  mutating func u16(_ value: UInt16) { append(bigEndian: UInt64(value), count: 2) }
  mutating func u32(_ value: UInt32) { append(bigEndian: UInt64(value), count: 4) }
  mutating func u64(_ value: UInt64) { append(bigEndian: value, count: 8) }
  mutating func append(_ other: [UInt8]) { bytes += other }

  private mutating func append(bigEndian value: UInt64, count: Int) {
    for shift in stride(from: (count - 1) * 8, through: 0, by: -8) {
      bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
    }
  }
}

/// Reads big-endian integers and byte runs, failing on any overrun.
struct ByteReader {
  let buffer: UnsafeRawBufferPointer
  private(set) var offset = 0

  init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

  var remaining: Int { buffer.count - offset }

  mutating func take(_ count: Int, _ what: String) throws -> UnsafeRawBufferPointer {
    guard count >= 0, count <= remaining else { throw ParseFailure("truncated in \(what)") }
    defer { offset += count }
    return UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
  }

  mutating func bytes(_ count: Int, _ what: String) throws -> [UInt8] { Array(try take(count, what)) }

  /// The next `count` bytes without consuming them (`count` <= `remaining`).
  func peek(_ count: Int) -> [UInt8] { Array(buffer[offset..<(offset + count)]) }

  mutating func integer(_ count: Int, _ what: String) throws -> UInt64 {
    try take(count, what).reduce(0) { $0 << 8 | UInt64($1) }
  }

  mutating func u8(_ what: String) throws -> UInt8 { UInt8(try integer(1, what)) }
  mutating func u16(_ what: String) throws -> UInt16 { UInt16(try integer(2, what)) }
  mutating func u32(_ what: String) throws -> UInt32 { UInt32(try integer(4, what)) }
  mutating func u64(_ what: String) throws -> UInt64 { try integer(8, what) }
}

/// The two stores of a vault, by their id byte in the file.
enum StoreID: UInt8, CaseIterable {
  case synchronisable = 1
  case deviceOnly = 2

  var itemClass: VaultItemClass {
    self == .synchronisable ? .afterFirstUnlock : .afterFirstUnlockThisDeviceOnly
  }

  var name: String { self == .synchronisable ? "synchronisable store" : "device-only store" }
}

let wrappedKeyByteCount = AES.GCM.nonceByteCount + SymmetricKey.byteCount + AES.GCM.tagByteCount

/// The vault file `vault.tkv`, format version 1 (SECURITY.md, "Vault file"):
/// the header, the wrapped master key and the sealed synchronisable store.
/// The device-only store lives in its own file (`DeviceFile`).
struct VaultFile {
  static let magic: [UInt8] = Array("TKVAULT".utf8) + [0]
  static let version: UInt16 = 1
  /// Bytes covered by the wrap AAD: magic through created.
  static let wrapAADByteCount = 60
  /// Offset of the generation counter.
  static let generationOffset = 121
  static let minimumStoreSealedByteCount = 28 + VaultLimits.paddingBlock
  static let maximumStoreSealedByteCount = 28 + VaultLimits.maximumStoreByteCount
  static let minimumByteCount = generationOffset + 8 + 5 + minimumStoreSealedByteCount + 32
  static let maximumByteCount = generationOffset + 8 + 5 + maximumStoreSealedByteCount + 32

  var vaultID: [UInt8]
  var preset: KDFPreset
  var kdf: PasswordKDF.Parameters
  var salt: [UInt8]
  var created: Int64
  var wrapped: AES.GCM.SealedBox
  var generation: UInt64
  var sealed: AES.GCM.SealedBox

  func prefix() -> [UInt8] {
    var writer = ByteWriter()
    writer.append(Self.magic)
    writer.u16(Self.version)
    writer.append(vaultID)
    writer.u8(1)  // Argon2id v1.3
    writer.u8(preset.rawValue)
    writer.u32(kdf.opsLimit)
    writer.u32(kdf.memoryKiB)
    writer.append(salt)
    writer.u64(UInt64(bitPattern: created))
    return writer.bytes
  }

  /// Associated data of the wrapped master key of the synchronisable store.
  func wrapAAD() -> [UInt8] { prefix() + [StoreID.synchronisable.rawValue] }

  /// Associated data of the sealed plaintext of the synchronisable store.
  static func storeAAD(vaultID: [UInt8], generation: UInt64) -> [UInt8] {
    var writer = ByteWriter()
    writer.append(magic)
    writer.u16(version)
    writer.append(vaultID)
    writer.u64(generation)
    writer.u8(StoreID.synchronisable.rawValue)
    return writer.bytes
  }

  func encode() -> [UInt8] {
    var writer = ByteWriter()
    writer.append(prefix())
    writer.u8(StoreID.synchronisable.rawValue)
    writer.append(wrapped.combined)
    writer.u64(generation)
    let combined = sealed.combined
    writer.u8(StoreID.synchronisable.rawValue)
    writer.u32(UInt32(combined.count))
    writer.append(combined)
    writer.append(SHA256.hash(data: writer.bytes).bytes)
    return writer.bytes
  }

  /// Parses and checks everything that needs no key: magic, version,
  /// checksum, structure and the caps on every cost and length.
  static func parse(_ bytes: [UInt8], path: String) throws -> VaultFile {
    guard bytes.count >= 10, Array(bytes[0..<8]) == magic else {
      throw TaskVaultError.damaged(path: path, reason: "not a TaskKey vault file (bad magic)")
    }
    let version = Int(bytes[8]) << 8 | Int(bytes[9])
    guard version == Int(Self.version) else { throw TaskVaultError.unsupportedVersion(path: path, version: version) }
    let body = try checkedBody(bytes, path: path, minimum: minimumByteCount, maximum: maximumByteCount)
    do {
      return try body.withUnsafeBytes { buffer in
        var reader = ByteReader(buffer)
        let (vaultID, preset, kdf, salt, created) = try readKDFHeader(&reader)
        guard try reader.u8("store id") == StoreID.synchronisable.rawValue else {
          throw ParseFailure("the wrapped key's store id is not 1")
        }
        let wrapped = try AES.GCM.SealedBox(combined: try reader.bytes(wrappedKeyByteCount, "wrapped key"))
        let generation = try reader.u64("generation")
        let sealed = try readStore(&reader, .synchronisable)
        guard reader.remaining == 0 else { throw ParseFailure("\(reader.remaining) trailing bytes") }
        return VaultFile(
          vaultID: vaultID, preset: preset, kdf: kdf, salt: salt, created: created, wrapped: wrapped,
          generation: generation, sealed: sealed)
      }
    } catch let failure as ParseFailure {
      throw TaskVaultError.damaged(path: path, reason: failure.reason)
    }
  }

  /// Checks the size bounds and the trailing SHA-256, and returns the bytes
  /// before the checksum.
  static func checkedBody(_ bytes: [UInt8], path: String, minimum: Int, maximum: Int) throws -> [UInt8] {
    guard bytes.count >= minimum else {
      throw TaskVaultError.damaged(path: path, reason: "truncated: \(bytes.count) bytes, at least \(minimum)")
    }
    guard bytes.count <= maximum else {
      throw TaskVaultError.damaged(path: path, reason: "\(bytes.count) bytes exceeds the limit \(maximum)")
    }
    let body = Array(bytes[..<(bytes.count - 32)])
    guard ConstantTime.equals(SHA256.hash(data: body).bytes, Array(bytes[(bytes.count - 32)...])) else {
      throw TaskVaultError.damaged(path: path, reason: "checksum mismatch (corrupted or altered)")
    }
    return body
  }

  /// Reads bytes 0..<60, the header that vault files and sync bundles
  /// share: magic and version (checked by the caller), vault id, KDF
  /// algorithm, preset and costs (checked against the caps before any
  /// derivation), salt and creation time.
  static func readKDFHeader(_ reader: inout ByteReader) throws -> (
    vaultID: [UInt8], preset: KDFPreset, kdf: PasswordKDF.Parameters, salt: [UInt8], created: Int64
  ) {
    _ = try reader.take(10, "magic and version")
    let vaultID = try reader.bytes(16, "vault id")
    guard try reader.u8("KDF algorithm") == 1 else { throw ParseFailure("unknown KDF algorithm") }
    guard let preset = KDFPreset(rawValue: try reader.u8("KDF preset")) else {
      throw ParseFailure("unknown KDF preset")
    }
    let kdf = PasswordKDF.Parameters(opsLimit: try reader.u32("KDF passes"), memoryKiB: try reader.u32("KDF memory"))
    if let problem = VaultKDF.check(kdf, preset: preset) { throw ParseFailure(problem) }
    let salt = try reader.bytes(16, "salt")
    let created = Int64(bitPattern: try reader.u64("created"))
    return (vaultID, preset, kdf, salt, created)
  }

  /// Reads `store id (1) || length (4) || sealed store`.
  static func readStore(_ reader: inout ByteReader, _ store: StoreID) throws -> AES.GCM.SealedBox {
    guard try reader.u8("store id") == store.rawValue else { throw ParseFailure("\(store.name) missing") }
    let length = Int(try reader.u32("store length"))
    try checkSealedLength(length, what: store.name)
    return try AES.GCM.SealedBox(combined: try reader.bytes(length, store.name))
  }

  static func checkSealedLength(_ length: Int, what: String) throws {
    guard length >= minimumStoreSealedByteCount, length <= maximumStoreSealedByteCount,
      (length - 28) % VaultLimits.paddingBlock == 0
    else { throw ParseFailure("\(what) length \(length) is not 28 + a multiple of 512 within the limits") }
  }
}

/// The device-only file `device-only/device.tkv`, format version 1
/// (SECURITY.md, "Device-only file"): the device-only store, its master key
/// wrapped under a key derived from the synchronisable master key, so a
/// passphrase change never touches it.
struct DeviceFile {
  static let magic: [UInt8] = Array("TKDEVICE".utf8)
  static let version: UInt16 = 1
  /// Offset of the generation counter.
  static let generationOffset = 87
  static let minimumByteCount = generationOffset + 8 + 5 + VaultFile.minimumStoreSealedByteCount + 32
  static let maximumByteCount = generationOffset + 8 + 5 + VaultFile.maximumStoreSealedByteCount + 32
  /// The label of the device-only wrap key derivation (31 bytes).
  static let wrapKeyLabel: [UInt8] = Array("TaskKey device-only wrap key v1".utf8)

  var vaultID: [UInt8]
  var wrapped: AES.GCM.SealedBox
  var generation: UInt64
  var sealed: AES.GCM.SealedBox

  /// magic || version || vault id: the first 26 bytes.
  static func prefix(vaultID: [UInt8]) -> [UInt8] {
    var writer = ByteWriter()
    writer.append(magic)
    writer.u16(version)
    writer.append(vaultID)
    return writer.bytes
  }

  /// Associated data of the wrapped device-only master key.
  var wrapAAD: [UInt8] { Self.prefix(vaultID: vaultID) + [StoreID.deviceOnly.rawValue] }

  /// Associated data of the sealed device-only store.
  static func storeAAD(vaultID: [UInt8], generation: UInt64) -> [UInt8] {
    var writer = ByteWriter()
    writer.append(prefix(vaultID: vaultID))
    writer.u64(generation)
    writer.u8(StoreID.deviceOnly.rawValue)
    return writer.bytes
  }

  /// The key that wraps the device-only master key:
  /// HMAC-SHA256(key = synchronisable master key, label || vault id).
  static func wrapKey(syncMasterKey: SymmetricKey, vaultID: [UInt8]) throws -> SymmetricKey {
    var code = HMACSHA256.authenticationCode(for: wrapKeyLabel + vaultID, using: syncMasterKey)
    defer { for index in code.indices { code[index] = 0 } }
    return try wrapCrypto { try code.withUnsafeBytes { try SymmetricKey(copying: $0) } }
  }

  func encode() -> [UInt8] {
    var writer = ByteWriter()
    writer.append(Self.prefix(vaultID: vaultID))
    writer.u8(StoreID.deviceOnly.rawValue)
    writer.append(wrapped.combined)
    writer.u64(generation)
    let combined = sealed.combined
    writer.u8(StoreID.deviceOnly.rawValue)
    writer.u32(UInt32(combined.count))
    writer.append(combined)
    writer.append(SHA256.hash(data: writer.bytes).bytes)
    return writer.bytes
  }

  /// Parses and checks everything that needs no key; `vaultID` is the id
  /// of the vault file it must belong to.
  static func parse(_ bytes: [UInt8], path: String, vaultID expected: [UInt8]) throws -> DeviceFile {
    guard bytes.count >= 10, Array(bytes[0..<8]) == magic else {
      throw TaskVaultError.damaged(path: path, reason: "not a TaskKey device-only file (bad magic)")
    }
    let version = Int(bytes[8]) << 8 | Int(bytes[9])
    guard version == Int(Self.version) else { throw TaskVaultError.unsupportedVersion(path: path, version: version) }
    let body = try VaultFile.checkedBody(bytes, path: path, minimum: minimumByteCount, maximum: maximumByteCount)
    do {
      return try body.withUnsafeBytes { buffer in
        var reader = ByteReader(buffer)
        _ = try reader.take(10, "magic and version")
        let vaultID = try reader.bytes(16, "vault id")
        guard vaultID == expected else { throw ParseFailure("it belongs to another vault (vault id differs)") }
        guard try reader.u8("store id") == StoreID.deviceOnly.rawValue else {
          throw ParseFailure("the wrapped key's store id is not 2")
        }
        let wrapped = try AES.GCM.SealedBox(combined: try reader.bytes(wrappedKeyByteCount, "wrapped key"))
        let generation = try reader.u64("generation")
        let sealed = try VaultFile.readStore(&reader, .deviceOnly)
        guard reader.remaining == 0 else { throw ParseFailure("\(reader.remaining) trailing bytes") }
        return DeviceFile(vaultID: vaultID, wrapped: wrapped, generation: generation, sealed: sealed)
      }
    } catch let failure as ParseFailure {
      throw TaskVaultError.damaged(path: path, reason: failure.reason)
    }
  }
}

/// One item as held in a decrypted store.
struct StoredItem {
  var name: String
  var label: String
  var itemClass: VaultItemClass
  var created: Int64
  var modified: Int64
  var value: SecureBytes

  var attributes: VaultItemAttributes {
    VaultItemAttributes(
      name: name, label: label, itemClass: itemClass,
      created: Date(timeIntervalSince1970: TimeInterval(created)),
      modified: Date(timeIntervalSince1970: TimeInterval(modified)))
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

  func index(of name: String) -> Int? { items.firstIndex { $0.name == name } }

  mutating func put(_ item: StoredItem) {
    if let index = index(of: item.name) {
      items[index] = item
    } else {
      items.append(item)
      items.sort { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
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
      var previous: [UInt8]?
      for _ in 0..<itemCount {
        guard try reader.u8("item class") == store.itemClass.rawValue else {
          throw ParseFailure("an item's class does not match the \(store.name)")
        }
        let nameBytes = try reader.bytes(Int(try reader.u8("name length")), "name")
        let name = String(decoding: nameBytes, as: UTF8.self)
        do { try validateItemName(name) } catch { throw ParseFailure("an invalid item name") }
        if let previous, !previous.lexicographicallyPrecedes(nameBytes) {
          throw ParseFailure("item names not strictly ascending")
        }
        previous = nameBytes
        let labelLength = Int(try reader.u16("label length"))
        guard labelLength <= VaultLimits.maximumLabelByteCount else { throw ParseFailure("a label is too long") }
        guard let label = String(validating: try reader.bytes(labelLength, "label"), as: UTF8.self) else {
          throw ParseFailure("a label is not UTF-8")
        }
        do { try validateLabel(label) } catch { throw ParseFailure("an invalid label") }
        let created = Int64(bitPattern: try reader.u64("created"))
        let modified = Int64(bitPattern: try reader.u64("modified"))
        let valueLength = Int(try reader.u32("value length"))
        guard valueLength <= VaultLimits.maximumValueByteCount else { throw ParseFailure("a value is too long") }
        let value = try wrapCrypto { try SecureBytes(copying: try reader.take(valueLength, "value")) }
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
