import TaskCrypto

/// One entry of the sync keyring: the secret every device of one user
/// shares, for one epoch, to seal what it writes to the storage
/// (docs/formats/sync-storage.md, *Keys*).
public struct SyncKey: Sendable {
  /// An entry's length: a u32 epoch and the 32-byte key.
  public static let entryByteCount = 36

  /// The epoch the key belongs to.
  public let epoch: UInt32
  private let key: SymmetricKey

  /// Reads one 36-byte entry.
  ///
  /// - Throws: `SyncOutcome.malformedSyncKey` for an entry that is not 36
  ///   bytes or has epoch 0.
  init(entry raw: UnsafeRawBufferPointer) throws(SyncOutcome) {
    guard raw.count == Self.entryByteCount else { throw .malformedSyncKey }
    let epoch = raw.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    guard epoch != 0, let key = try? SymmetricKey(copying: UnsafeRawBufferPointer(rebasing: raw[4...])) else {
      throw .malformedSyncKey
    }
    (self.epoch, self.key) = (epoch, key)
  }

  /// A new random entry of `epoch`, as its 36 bytes in locked memory.
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable` when locked memory or
  ///   randomness is refused.
  public static func generateEntry(epoch: UInt32) throws -> SecureBytes {
    let value = try SecureBytes.random(count: entryByteCount)
    value.withUnsafeMutableBytes { raw in
      for (index, byte) in SyncObjectFormat.bigEndian(epoch).enumerated() { raw[index] = byte }
    }
    return value
  }

  /// The target key K(T, epoch): HKDF-SHA512 of the key with the target
  /// id as salt and `"tasker-sync v1 target" || u32(epoch)` as info.
  ///
  /// - Throws: `TaskCryptoError` when locked memory is refused.
  public func targetKey(for targetID: [UInt8]) throws -> SymmetricKey {
    try derivedKey(label: "tasker-sync v1 target", targetID: targetID)
  }

  /// The blob key A(T, epoch) that seals attachment contents: as the
  /// target key, with the info `"tasker-sync v1 attachment" || u32(epoch)`.
  ///
  /// - Throws: `TaskCryptoError` when locked memory is refused.
  public func attachmentKey(for targetID: [UInt8]) throws -> SymmetricKey {
    try derivedKey(label: "tasker-sync v1 attachment", targetID: targetID)
  }

  private func derivedKey(label: String, targetID: [UInt8]) throws -> SymmetricKey {
    let info = Array(label.utf8) + SyncObjectFormat.bigEndian(epoch)
    let derived = try key.withUnsafeBytes { raw in
      try HKDFSHA512.deriveBytes(inputKeyMaterial: raw, salt: targetID, info: info, outputByteCount: 32)
    }
    return try SymmetricKey(bytes: derived)
  }
}

/// The sync keyring: the vault item `tasker.sync-key` of the
/// synchronisable class, 1 to 64 entries in strictly increasing epoch
/// order, so it travels with the note keys and with nothing else. The
/// newest entry seals what this device writes; older ones read what was
/// written before a device was removed.
public struct SyncKeyring: Sendable {
  /// The vault item's name.
  public static let itemName = "tasker.sync-key"
  /// At most this many entries.
  public static let maximumEntries = 64

  /// The entries, oldest first.
  public let entries: [SyncKey]
  /// The item's value, kept to append to it.
  let itemValue: SecureBytes

  /// Reads the vault item's value.
  ///
  /// - Throws: `SyncOutcome.malformedSyncKey` for a value whose length is
  ///   0 or not a multiple of 36, more than 64 entries, an epoch 0, or
  ///   epochs not strictly increasing.
  public init(itemValue: SecureBytes) throws(SyncOutcome) {
    let size = SyncKey.entryByteCount
    guard itemValue.count > 0, itemValue.count % size == 0, itemValue.count / size <= Self.maximumEntries else {
      throw .malformedSyncKey
    }
    let entries = itemValue.withUnsafeBytes { raw -> [SyncKey]? in
      var entries: [SyncKey] = []
      for start in stride(from: 0, to: raw.count, by: size) {
        guard let entry = try? SyncKey(entry: UnsafeRawBufferPointer(rebasing: raw[start..<start + size])),
          entries.last.map({ $0.epoch < entry.epoch }) ?? true
        else { return nil }
        entries.append(entry)
      }
      return entries
    }
    guard let entries else { throw .malformedSyncKey }
    self.entries = entries
    self.itemValue = itemValue
  }

  /// A new keyring of one random entry of epoch 1, and its item value.
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable`.
  public static func generate() throws -> (keyring: SyncKeyring, itemValue: SecureBytes) {
    let value = try SyncKey.generateEntry(epoch: 1)
    return (try SyncKeyring(itemValue: value), value)
  }

  /// The newest entry: what this device seals under.
  public var newest: SyncKey { entries[entries.count - 1] }

  /// The entry of `epoch`, nil when the keyring has none.
  public func key(epoch: UInt32) -> SyncKey? { entries.first { $0.epoch == epoch } }

  /// This keyring with `entry` (36 bytes, an epoch above the newest)
  /// appended, and the new item value.
  ///
  /// - Throws: `SyncOutcome.malformedSyncKey` for an entry that does not
  ///   follow; `TaskCryptoError.resourceUnavailable`.
  public func appending(_ entry: SecureBytes) throws -> (keyring: SyncKeyring, itemValue: SecureBytes) {
    let value = try SecureBytes(zeroedCount: itemValue.count + entry.count)
    value.withUnsafeMutableBytes { output in
      itemValue.withUnsafeBytes { output.copyMemory(from: $0) }
      entry.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: output[itemValue.count...]).copyMemory(from: $0) }
    }
    return (try SyncKeyring(itemValue: value), value)
  }
}
