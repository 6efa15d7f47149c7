import TaskCrypto

/// The sync key: the secret every device of one user shares to seal what
/// it writes to the storage (docs/formats/sync-storage.md, *Keys*). It is
/// the vault item `tasker.sync-key` of the synchronisable class, so it
/// travels with the note keys and with nothing else.
public struct SyncKey: Sendable {
  /// The vault item's name.
  public static let itemName = "tasker.sync-key"
  /// The item value's length: a u32 epoch and the 32-byte key.
  public static let itemByteCount = 36

  /// The epoch the key belongs to (version 1 writes 1).
  public let epoch: UInt32
  private let key: SymmetricKey

  /// Reads the vault item's value.
  ///
  /// - Throws: `SyncOutcome.malformedSyncKey` for a value that is not 36
  ///   bytes or has epoch 0.
  public init(itemValue: SecureBytes) throws(SyncOutcome) {
    guard itemValue.count == Self.itemByteCount else { throw .malformedSyncKey }
    let parsed: (UInt32, SymmetricKey)? = itemValue.withUnsafeBytes { raw in
      let epoch = raw.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
      guard let key = try? SymmetricKey(copying: UnsafeRawBufferPointer(rebasing: raw[4...])) else { return nil }
      return (epoch, key)
    }
    guard let parsed, parsed.0 != 0 else { throw .malformedSyncKey }
    (epoch, key) = parsed
  }

  /// A new random key of epoch 1 and its item value.
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable` when locked memory or
  ///   randomness is refused.
  public static func generate() throws -> (key: SyncKey, itemValue: SecureBytes) {
    let value = try SecureBytes.random(count: itemByteCount)
    value.withUnsafeMutableBytes { raw in
      raw[0] = 0
      raw[1] = 0
      raw[2] = 0
      raw[3] = 1
    }
    return (try SyncKey(itemValue: value), value)
  }

  /// The target key K(T, epoch): HKDF-SHA512 of the key with the target
  /// id as salt and `"tasker-sync v1 target" || u32(epoch)` as info.
  ///
  /// - Throws: `TaskCryptoError` when locked memory is refused.
  public func targetKey(for targetID: [UInt8]) throws -> SymmetricKey {
    var info = Array("tasker-sync v1 target".utf8)
    info += [UInt8(epoch >> 24), UInt8(epoch >> 16 & 0xff), UInt8(epoch >> 8 & 0xff), UInt8(epoch & 0xff)]
    let derived = try key.withUnsafeBytes { raw in
      try HKDFSHA512.deriveBytes(inputKeyMaterial: raw, salt: targetID, info: info, outputByteCount: 32)
    }
    return try SymmetricKey(bytes: derived)
  }
}
