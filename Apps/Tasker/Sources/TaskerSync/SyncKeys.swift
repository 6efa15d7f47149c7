import TaskCrypto

/// The keys one sync works with: the keyring (which grows when an epoch
/// change hands this device a new entry, saved to the vault at once) and
/// this device's box key pair.
public final class SyncKeys: @unchecked Sendable {
  /// The keyring as it stands.
  public private(set) var keyring: SyncKeyring
  /// This device's box public key.
  public let boxPublicKey: [UInt8]
  private let boxSecretKey: SecureBytes
  private let save: (SecureBytes) throws -> Void

  /// Keys for one sync; `save` writes a new keyring value to the vault.
  ///
  /// - Throws: `TaskCryptoError` for a box secret key that is not 32 bytes.
  public init(keyring: SyncKeyring, boxSecretKey: SecureBytes, save: @escaping (SecureBytes) throws -> Void) throws {
    self.keyring = keyring
    self.boxSecretKey = boxSecretKey
    self.boxPublicKey = try AnonymousBox.publicKey(of: boxSecretKey)
    self.save = save
  }

  /// Appends `entry` (36 bytes of the next epoch), saving the keyring first.
  ///
  /// - Throws: `SyncOutcome.malformedSyncKey` for an entry that does not
  ///   follow; vault errors from `save`.
  func add(_ entry: SecureBytes) throws {
    let (grown, value) = try keyring.appending(entry)
    try save(value)
    keyring = grown
  }

  /// The entry of `epoch` sealed in `box` to this device, nil when it does
  /// not open or is not 36 bytes of that epoch.
  func openEntry(_ box: [UInt8], epoch: UInt32) -> SecureBytes? {
    guard let entry = try? AnonymousBox.open(box, publicKey: boxPublicKey, secretKey: boxSecretKey),
      entry.withUnsafeBytes({ try? SyncKey(entry: $0) })?.epoch == epoch
    else { return nil }
    return entry
  }
}

extension SyncKeyring {
  /// A copy of the entry of `epoch`'s 36 bytes, nil when there is none.
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable`.
  func entryValue(epoch: UInt32) throws -> SecureBytes? {
    guard let index = entries.firstIndex(where: { $0.epoch == epoch }) else { return nil }
    let size = SyncKey.entryByteCount
    return try itemValue.withUnsafeBytes {
      try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[index * size..<(index + 1) * size]))
    }
  }
}
