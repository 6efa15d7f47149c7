import FoundationEssentials
import TaskCrypto

/// The two stores of a vault, by their id byte in the file.
enum StoreID: UInt8, CaseIterable {
  case synchronisable = 1
  case deviceOnly = 2

  var itemClass: VaultItemClass {
    self == .synchronisable ? .afterFirstUnlock : .afterFirstUnlockThisDeviceOnly
  }

  var name: String { self == .synchronisable ? "synchronisable store" : "device-only store" }

  /// The store that holds items of `itemClass`.
  init(_ itemClass: VaultItemClass) {
    self = itemClass == .afterFirstUnlock ? .synchronisable : .deviceOnly
  }

  /// The other store.
  var other: StoreID { self == .synchronisable ? .deviceOnly : .synchronisable }
}

let wrappedKeyByteCount = AES.GCM.nonceByteCount + SymmetricKey.byteCount + AES.GCM.tagByteCount

/// The vault file `vault.tkv`, format version 1 (SECURITY.md, "Vault file"):
/// the header, the wrapped master key and the sealed synchronisable store.
/// The device-only store lives in its own file (`DeviceFile`).
struct VaultFile {
  static let header = FormatHeader.vaultFile
  static let version = header.version
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
    writer.append(Self.header.bytes)
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
    writer.append(header.bytes)
    writer.append(vaultID)
    writer.u64(generation)
    writer.u8(StoreID.synchronisable.rawValue)
    return writer.bytes
  }

  func encode() -> [UInt8] {
    Self.encode(prefix: prefix(), store: .synchronisable, wrapped: wrapped, generation: generation, sealed: sealed)
  }

  /// The layout both vault-family files share after their prefix:
  /// `store id || wrapped key || generation || store id || length || sealed
  /// store || SHA-256 of everything before it`.
  static func encode(
    prefix: [UInt8], store: StoreID, wrapped: AES.GCM.SealedBox, generation: UInt64, sealed: AES.GCM.SealedBox
  ) -> [UInt8] {
    var writer = ByteWriter()
    writer.append(prefix)
    writer.u8(store.rawValue)
    writer.append(wrapped.combined)
    writer.u64(generation)
    let combined = sealed.combined
    writer.u8(store.rawValue)
    writer.u32(UInt32(combined.count))
    writer.append(combined)
    writer.append(SHA256.hash(data: writer.bytes).bytes)
    return writer.bytes
  }

  /// Parses and checks everything that needs no key: magic, version,
  /// checksum, structure and the caps on every cost and length.
  static func parse(_ bytes: [UInt8], path: String) throws -> VaultFile {
    try header.check(bytes, path: path)
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
    return try AES.GCM.SealedBox(combined: try reader.take(length, store.name))
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
  static let header = FormatHeader.deviceFile
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
    header.bytes + vaultID
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
    try wrapCrypto { try HMACSHA256.deriveKey(from: syncMasterKey, data: wrapKeyLabel + vaultID) }
  }

  func encode() -> [UInt8] {
    VaultFile.encode(
      prefix: Self.prefix(vaultID: vaultID), store: .deviceOnly, wrapped: wrapped, generation: generation,
      sealed: sealed)
  }

  /// Parses and checks everything that needs no key; `vaultID` is the id
  /// of the vault file it must belong to.
  static func parse(_ bytes: [UInt8], path: String, vaultID expected: [UInt8]) throws -> DeviceFile {
    try header.check(bytes, path: path)
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

extension VaultFile {
  /// SHA-256 of the header a session relies on and every write carries
  /// forward: bytes 0..<121 of `vault.tkv` (magic, version, vault id, KDF,
  /// salt, created, wrapped key). The unlock session binds it, so an edit
  /// while unlocked is refused as tampering instead of being used.
  var headerDigest: [UInt8] {
    // The same bytes as `encode().prefix(generationOffset)`, without
    // encoding (and hashing) the whole sealed store to take 121 of them.
    let header = prefix() + [StoreID.synchronisable.rawValue] + wrapped.combined
    precondition(header.count == Self.generationOffset, "the vault header is 121 bytes")
    return SHA256.hash(data: header).bytes
  }
}
