import TaskCrypto

/// The pure side of the vault format: bytes in, values out. No directory,
/// lock, session or file is touched, so the same checks (and error causes)
/// serve `Vault`, `VaultFileReader`, backups and vector checks.
enum VaultCodec {
  /// A vault file opened with its passphrase.
  struct Opened {
    let file: VaultFile
    let keys: VaultKeys
    let stores: Stores
  }

  /// Refuses an empty or over-long passphrase.
  static func checkPassphrase(_ passphrase: SecureBytes) throws {
    guard passphrase.count > 0 else { throw TaskVaultError.emptyPassphrase }
    guard passphrase.count <= VaultLimits.maximumPassphraseByteCount else {
      throw TaskVaultError.passphraseTooLong(limit: VaultLimits.maximumPassphraseByteCount)
    }
  }

  /// Parses and opens the bytes of a `vault.tkv` (and of its device-only
  /// file, when given; else the device-only store is empty).
  ///
  /// - Parameters:
  ///   - vaultPath, devicePath: how errors name the two files.
  /// - Throws: `TaskVaultError.damaged`, `.unsupportedVersion`,
  ///   `.wrongPassphrase`, `.tampered`, `.emptyPassphrase`, `.passphraseTooLong`.
  static func open(
    _ bytes: [UInt8], deviceOnlyFile: [UInt8]?, passphrase: SecureBytes, vaultPath: String, devicePath: String
  ) throws -> Opened {
    try checkPassphrase(passphrase)
    let file = try VaultFile.parse(bytes, path: vaultPath)
    let device = try deviceOnlyFile.map { try DeviceFile.parse($0, path: devicePath, vaultID: file.vaultID) }
    let keys = try unwrap(file, passphrase: passphrase)
    let stores = try openStores(file, device: device, keys: keys, vaultPath: vaultPath, devicePath: devicePath)
    return Opened(file: file, keys: keys, stores: stores)
  }

  /// Derives the KEK and unwraps the synchronisable master key; a tag
  /// failure is a wrong passphrase.
  static func unwrap(_ file: VaultFile, passphrase: SecureBytes) throws -> VaultKeys {
    try checkPassphrase(passphrase)
    try hardenProcess()
    let kek = try wrapCrypto {
      try PasswordKDF.deriveKey(from: PassphraseBytes.kdfInput(passphrase), salt: file.salt, parameters: file.kdf)
    }
    do {
      let raw = try AES.GCM.openSecret(file.wrapped, using: kek, authenticating: file.wrapAAD())
      return try VaultKeys(sync: try wrapCrypto { try SymmetricKey(bytes: raw) }, vaultID: file.vaultID)
    } catch TaskCryptoError.authenticationFailed {
      throw TaskVaultError.wrongPassphrase
    } catch let error as TaskCryptoError {
      throw TaskVaultError.crypto(error)
    }
  }

  /// Unwraps the device-only master key; a tag failure is tampering.
  static func unwrapDeviceKey(_ device: DeviceFile, keys: VaultKeys, path: String) throws -> SymmetricKey {
    do {
      let raw = try AES.GCM.openSecret(device.wrapped, using: keys.deviceWrap, authenticating: device.wrapAAD)
      return try wrapCrypto { try SymmetricKey(bytes: raw) }
    } catch TaskCryptoError.authenticationFailed {
      throw TaskVaultError.tampered(path: path, part: "wrapped key of the device-only store")
    } catch let error as TaskCryptoError {
      throw TaskVaultError.crypto(error)
    }
  }

  /// Opens both stores; a missing device-only file is an empty store.
  static func openStores(
    _ file: VaultFile, device: DeviceFile?, keys: VaultKeys, vaultPath: String, devicePath: String
  ) throws -> Stores {
    let sync = try openSynchronisable(file, keys: keys, path: vaultPath)
    guard let device else { return Stores(synchronisable: sync, deviceOnly: StoreContents(keyring: nil, items: [])) }
    return Stores(synchronisable: sync, deviceOnly: try openDeviceOnly(device, keys: keys, path: devicePath))
  }

  /// Opens the synchronisable store of a vault file.
  static func openSynchronisable(_ file: VaultFile, keys: VaultKeys, path: String) throws -> StoreContents {
    try openStore(
      file.sealed, key: keys.sync, aad: VaultFile.storeAAD(vaultID: file.vaultID, generation: file.generation),
      store: .synchronisable, path: path)
  }

  /// Opens the store of a device-only file.
  static func openDeviceOnly(_ device: DeviceFile, keys: VaultKeys, path: String) throws -> StoreContents {
    try openStore(
      device.sealed, key: try unwrapDeviceKey(device, keys: keys, path: path),
      aad: DeviceFile.storeAAD(vaultID: device.vaultID, generation: device.generation), store: .deviceOnly,
      path: path)
  }

  /// Opens one sealed store: a tag failure is tampering, a bad plaintext
  /// is damage.
  static func openStore(_ sealed: AES.GCM.SealedBox, key: SymmetricKey, aad: [UInt8], store: StoreID, path: String)
    throws -> StoreContents
  {
    let plaintext: SecureBytes
    do {
      plaintext = try AES.GCM.openSecret(sealed, using: key, authenticating: aad)
    } catch TaskCryptoError.authenticationFailed {
      throw TaskVaultError.tampered(path: path, part: store.name)
    } catch let error as TaskCryptoError {
      throw TaskVaultError.crypto(error)
    }
    do {
      return try StoreContents.decode(plaintext, store: store)
    } catch let failure as ParseFailure {
      throw TaskVaultError.damaged(path: path, reason: "\(store.name): \(failure.reason)")
    }
  }
}
