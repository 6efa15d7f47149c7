import FoundationEssentials
import TaskCrypto
import TaskSystem

/// Reading and writing the vault's files: every read under the shared
/// `flock`, every write under the exclusive one, through TaskSystem's one
/// durable replace.
extension Vault {
  /// Both stores, opened with the unlock session's keys.
  func read() throws -> Stores {
    let lock = try Files.lock(layout.lockFile, exclusive: false)
    defer { lock.release() }
    try checkDirectories()
    let file = try readFile()
    let keys = try sessionKeys(file).keys
    return try openStores(file, keys: keys)
  }

  /// The synchronisable store alone, opened with the unlock session's
  /// keys: `vault.tkv` and the session are read, the device-only file
  /// (`device.tkv`) is neither opened nor read, so what holds only note
  /// keys and synchronisable items never touches device-only secrets.
  func readSynchronisable() throws -> StoreContents {
    let lock = try Files.lock(layout.lockFile, exclusive: false)
    defer { lock.release() }
    try checkDirectories()
    let file = try readFile()
    return try VaultCodec.openSynchronisable(file, keys: try sessionKeys(file).keys, path: layout.vaultFile)
  }

  /// Reads both stores, runs `body`, and writes back each store whose
  /// encoding changed: the device-only file first, then `vault.tkv`.
  func modify(_ body: (inout Stores) throws -> Void) throws {
    let lock = try Files.lock(layout.lockFile, exclusive: true)
    defer { lock.release() }
    try checkDirectories()
    var file = try readFile()
    let keys = try sessionKeys(file).keys
    let device = try readDeviceFile(vaultID: file.vaultID)
    var stores = try VaultCodec.openStores(
      file, device: device, keys: keys, vaultPath: layout.vaultFile, devicePath: layout.deviceFile)
    let before = (sync: try stores.synchronisable.encode(), device: try stores.deviceOnly.encode())
    try body(&stores)
    if !sameBytes(before.device, try stores.deviceOnly.encode()) {
      try prepareDeviceOnlyDirectory()
      let deviceKey =
        try device.map { try VaultCodec.unwrapDeviceKey($0, keys: keys, path: layout.deviceFile) }
        ?? environment.randomKey()
      var next = DeviceFile(
        vaultID: file.vaultID,
        wrapped: try deviceKey.withUnsafeBytes { raw in
          try environment.seal(raw, keys.deviceWrap, DeviceFile.prefix(vaultID: file.vaultID) + [2])
        },
        generation: (device?.generation ?? 0) + 1,
        sealed: try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: 28)))
      let plaintext = try stores.deviceOnly.encode()
      next.sealed = try plaintext.withUnsafeBytes { raw in
        try environment.seal(raw, deviceKey, DeviceFile.storeAAD(vaultID: file.vaultID, generation: next.generation))
      }
      try commitDevice(next, keys: keys)
    }
    if !sameBytes(before.sync, try stores.synchronisable.encode()) {
      try seal(stores.synchronisable, into: &file, keys: keys, generation: file.generation + 1)
      try commit(file, keys: keys)
    }
  }

  /// Refuses to read or write items while the vault directory or
  /// `device-only/` is open to group or others or not the user's: reads
  /// are held to the same rule as writes.
  func checkDirectories() throws {
    try system {
      try PrivateDirectory.check(layout.directory)
      try PrivateDirectory.check(layout.deviceOnlyDirectory)
    }
  }

  private func sameBytes(_ first: SecureBytes, _ second: SecureBytes) -> Bool {
    first.withUnsafeBytes { one in second.withUnsafeBytes { two in ConstantTime.equals(one, two) } }
  }

  /// The parsed `vault.tkv`.
  func readFile() throws -> VaultFile {
    guard let bytes = try Files.readPrivate(layout.vaultFile, limit: VaultFile.maximumByteCount) else {
      throw TaskVaultError.notInitialised(path: layout.vaultFile)
    }
    return try VaultFile.parse(bytes, path: layout.vaultFile)
  }

  /// The device-only file, or nil when it does not exist.
  func readDeviceFile(vaultID: [UInt8]) throws -> DeviceFile? {
    guard let bytes = try Files.readPrivate(layout.deviceFile, limit: DeviceFile.maximumByteCount) else { return nil }
    return try DeviceFile.parse(bytes, path: layout.deviceFile, vaultID: vaultID)
  }

  /// Opens the synchronisable store and the device-only file (read from
  /// disk); a missing device-only file is an empty device-only store.
  func openStores(_ file: VaultFile, keys: VaultKeys) throws -> Stores {
    try VaultCodec.openStores(
      file, device: try readDeviceFile(vaultID: file.vaultID), keys: keys, vaultPath: layout.vaultFile,
      devicePath: layout.deviceFile)
  }

  /// The master keys from the unlock session, or `.locked` with the reason.
  func sessionKeys(_ file: VaultFile) throws -> (keys: VaultKeys, notAfter: Int64) {
    try session.keys(file: file)
  }

  /// Wraps the synchronisable master key under the passphrase's KEK.
  func wrap(_ key: SymmetricKey, in file: VaultFile, passphrase: SecureBytes) throws -> AES.GCM.SealedBox {
    let kek = try wrapCrypto {
      try PasswordKDF.deriveKey(from: PassphraseBytes.kdfInput(passphrase), salt: file.salt, parameters: file.kdf)
    }
    return try key.withUnsafeBytes { raw in try environment.seal(raw, kek, file.wrapAAD()) }
  }

  /// Seals the synchronisable store into `file` as generation `generation`.
  func seal(_ store: StoreContents, into file: inout VaultFile, keys: VaultKeys, generation: UInt64) throws {
    file.generation = generation
    let plaintext = try store.encode()
    let aad = VaultFile.storeAAD(vaultID: file.vaultID, generation: generation)
    file.sealed = try plaintext.withUnsafeBytes { raw in try environment.seal(raw, keys.sync, aad) }
  }

  /// Writes a new generation of `vault.tkv` durably, confirming it opens.
  ///
  /// `beforeRename` runs once the new file is staged beside the old one and
  /// before anything else changes (see `FileSystem.replace`).
  func commit(_ file: VaultFile, keys: VaultKeys, beforeRename: () throws -> Void = {}) throws {
    try commit(file.encode(), path: layout.vaultFile, previous: layout.previousVaultFile, beforeRename: beforeRename) {
      path in
      guard let bytes = try Files.readPrivate(path, limit: VaultFile.maximumByteCount) else {
        throw TaskVaultError.notInitialised(path: path)
      }
      _ = try VaultCodec.openSynchronisable(try VaultFile.parse(bytes, path: path), keys: keys, path: path)
    }
  }

  /// Writes a new generation of the device-only file durably, confirming it opens.
  func commitDevice(_ device: DeviceFile, keys: VaultKeys) throws {
    try commit(device.encode(), path: layout.deviceFile, previous: layout.previousDeviceFile) { path in
      guard let bytes = try Files.readPrivate(path, limit: DeviceFile.maximumByteCount) else {
        throw TaskVaultError.notInitialised(path: path)
      }
      let parsed = try DeviceFile.parse(bytes, path: path, vaultID: device.vaultID)
      _ = try VaultCodec.openDeviceOnly(parsed, keys: keys, path: path)
    }
  }

  /// Writes a new generation through TaskSystem's one replace: temporary
  /// file (O_EXCL, 0600), fsync, confirm readable, keep the old file as
  /// `<name>.prev`, rename over, fsync the directory, confirm again, drop
  /// the backup.
  private func commit(
    _ bytes: [UInt8], path: String, previous: String, beforeRename: () throws -> Void = {},
    confirm: (String) throws -> Void
  ) throws {
    let fileSystem = environment.fileSystem
    try system {
      try bytes.withUnsafeBytes {
        try fileSystem.replace(
          path, contents: $0, temporary: path + VaultLayout.temporarySuffix, previous: previous, confirm: confirm,
          beforeRename: beforeRename)
      }
    }
  }
}
