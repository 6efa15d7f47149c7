import Foundation
import TaskCrypto
import TaskSystem

/// What `Vault.status()` reports; none of it is secret.
public struct VaultStatus: Sendable, Equatable {
  /// Whether the vault can be read without a passphrase right now.
  public enum LockState: Sendable, Equatable {
    /// Locked, and why.
    case locked(LockReason)
    /// Unlocked until the machine restarts, `lock()` runs, or `until`.
    case unlocked(until: Date?)
  }

  /// The vault directory.
  public let directory: String
  /// The vault file's format version.
  public let formatVersion: Int
  /// The vault's random id, 32 lowercase hex digits.
  public let vaultID: String
  /// How the KDF costs were chosen.
  public let kdfPreset: KDFPreset
  /// The Argon2id costs recorded (and authenticated) in the header.
  public let kdfParameters: PasswordKDF.Parameters
  /// When the vault was made.
  public let created: Date
  /// How many times the synchronisable store (`vault.tkv`) has been written.
  public let generation: UInt64
  /// The device-only store's file: its generation, or nil when it does not
  /// exist (never written on this device, or the vault was restored from a
  /// backup, so the device-only store starts empty).
  public let deviceOnlyGeneration: UInt64?
  /// Locked or unlocked.
  public let lockState: LockState
}

/// A passphrase-guarded key vault: a directory holding the vault file
/// `vault.tkv` with the synchronisable store (the note keyring and items
/// that may travel to the user's other devices), and the subdirectory
/// `device-only/`, marked so that backup tools skip it, with the
/// device-only store `device.tkv`, the unlock session and the assistant
/// registry.
///
/// The passphrase derives a key-encryption key with Argon2id; it wraps the
/// random master key of the synchronisable store. The device-only store's
/// own random master key is wrapped under a key derived from that master
/// key, so a passphrase change rewrites `vault.tkv` alone. Each store is
/// sealed with AES-256-GCM under its master key. `unlock(passphrase:for:)` makes the vault
/// readable by every process of the same user until the machine restarts,
/// `lock()` runs or the optional time limit passes. Every write holds an
/// exclusive `flock`, goes to a temporary file that is synced, checked and
/// renamed over the old one, and keeps the old one as `vault.tkv.prev`
/// until the new one is confirmed readable.
public final class Vault: @unchecked Sendable {
  /// The vault directory.
  public let directory: String
  let environment: VaultEnvironment

  var vaultPath: String { memoryName ?? directory + "/vault.tkv" }
  var previousPath: String { directory + "/vault.tkv.prev" }
  var temporaryPath: String { directory + "/vault.tkv.tmp" }
  var lockPath: String { directory + "/vault.lock" }
  var sessionPath: String { deviceOnlyDirectory + "/unlock.session" }
  var devicePath: String { memoryName.map { $0 + " (device-only)" } ?? deviceOnlyDirectory + "/device.tkv" }
  var devicePreviousPath: String { deviceOnlyDirectory + "/device.tkv.prev" }
  var deviceTemporaryPath: String { deviceOnlyDirectory + "/device.tkv.tmp" }

  /// The subdirectory that holds everything that must never leave this
  /// device: `<vault>/device-only`, marked with `CACHEDIR.TAG`, `.nobackup`
  /// and the `user.xdg.robots.backup` attribute.
  public var deviceOnlyDirectory: String { directory + "/device-only" }

  /// The vault directory for an environment: `TASKKEY_HOME`, else
  /// `$XDG_DATA_HOME/tasker/keys` (when absolute), else
  /// `$HOME/.local/share/tasker/keys`.
  ///
  /// - Returns: the path, or nil when not even `HOME` is set.
  public static func defaultDirectory(environment: [String: String]) -> String? {
    if let home = environment["TASKKEY_HOME"], !home.isEmpty { return home }
    if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/tasker/keys" }
    if let home = environment["HOME"], !home.isEmpty { return home + "/.local/share/tasker/keys" }
    return nil
  }

  /// Opens an existing vault without unlocking it, after checking that the
  /// directory and file are private to the user.
  ///
  /// - Throws: `TaskVaultError.notInitialised`, `.loosePermissions`,
  ///   `.notOwner`, `.untrustedSymlink`, `.wrongFileType`, `.io`.
  public convenience init(at directory: String) throws {
    try self.init(at: directory, environment: .production)
  }

  init(at directory: String, environment: VaultEnvironment) throws {
    self.directory = directory
    self.environment = environment
    self.memoryName = nil
    guard try system({ try PrivateDirectory.check(directory) }) else {
      throw TaskVaultError.notInitialised(path: directory)
    }
    guard try Files.privateFileExists(vaultPath) else { throw TaskVaultError.notInitialised(path: vaultPath) }
  }

  /// Makes a new vault: a 0700 directory, a fresh note keyring with one
  /// key, empty stores, and Argon2id costs calibrated to about half a
  /// second (or the fast test preset). Nothing is unlocked.
  ///
  /// - Parameters:
  ///   - directory: the vault directory; missing parents are made 0700.
  ///   - passphrase: 1 to 1024 bytes.
  ///   - preset: `.calibrated` for real use; `.fastTestOnly` for tests.
  /// - Returns: the vault.
  /// - Throws: `TaskVaultError.alreadyInitialised`, `.emptyPassphrase`,
  ///   `.passphraseTooLong`, permission and I/O errors.
  public static func create(at directory: String, passphrase: SecureBytes, preset: KDFPreset = .calibrated) throws
    -> Vault
  {
    try create(at: directory, passphrase: passphrase, preset: preset, environment: .production)
  }

  static func create(
    at directory: String, passphrase: SecureBytes, preset: KDFPreset, environment: VaultEnvironment
  ) throws -> Vault {
    try checkPassphrase(passphrase)
    let parameters = preset == .fastTestOnly ? VaultKDF.fastTestParameters : try VaultKDF.calibrate()
    try system { try PrivateDirectory.make(directory) }
    let vault = Vault(unchecked: directory, environment: environment)
    let lock = try Files.lock(vault.lockPath, exclusive: true)
    defer { lock.release() }
    guard try !Files.privateFileExists(vault.vaultPath) else {
      throw TaskVaultError.alreadyInitialised(path: vault.vaultPath)
    }
    try hardenProcess()
    let syncKey = try environment.randomKey()
    let noteKey = NoteKey(
      id: KeyID(rawValue: environment.randomBytes(4).reduce(0) { $0 << 8 | UInt32($1) }),
      key: try environment.randomKey())
    var file = VaultFile(
      vaultID: environment.randomBytes(16), preset: preset, kdf: parameters,
      salt: environment.randomBytes(PasswordKDF.saltByteCount), created: environment.now(),
      wrapped: try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: wrappedKeyByteCount)), generation: 0,
      sealed: try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: 28)))
    file.wrapped = try wrap(syncKey, in: file, passphrase: passphrase, environment: environment)
    try vault.prepareDeviceOnlyDirectory()
    let keys = try VaultKeys(sync: syncKey, vaultID: file.vaultID)
    try vault.seal(StoreContents(keyring: Keyring(primary: noteKey), items: []), into: &file, keys: keys, generation: 1)
    try vault.commit(file, keys: keys)
    return vault
  }

  /// A vault in a directory about to receive its `vault.tkv`.
  convenience init(installing directory: String) { self.init(unchecked: directory, environment: .production) }

  private init(unchecked directory: String, environment: VaultEnvironment) {
    self.directory = directory
    self.environment = environment
    self.memoryName = nil
  }

  /// A vault with no directory, for `VaultFileReader`: `vaultPath` is
  /// `name` and nothing is read from or written to disk.
  init(memory name: String) {
    self.directory = ""
    self.environment = .production
    self.memoryName = name
  }

  /// Set only for in-memory reading (`VaultFileReader`).
  private let memoryName: String?

  // MARK: - Unlocking

  /// Unlocks the vault for every process of this user until the machine
  /// restarts, `lock()` runs, or `duration` passes.
  ///
  /// The passphrase unwraps the synchronisable master key and both stores
  /// are checked (a missing device-only file is an empty store); then a
  /// fresh session key is written to the tmpfs runtime directory and the
  /// synchronisable master key and device-only wrap key, sealed under it,
  /// to `device-only/unlock.session`. The passphrase itself is never stored.
  ///
  /// - Parameters:
  ///   - passphrase: the vault's passphrase.
  ///   - duration: an optional time limit.
  /// - Throws: `TaskVaultError.wrongPassphrase`, `.emptyPassphrase`,
  ///   `.damaged`, `.tampered`, `.unsupportedVersion`,
  ///   `.unlockUnavailable`, permission and I/O errors.
  public func unlock(passphrase: SecureBytes, for duration: Duration? = nil) throws {
    try Self.checkPassphrase(passphrase)
    let lock = try Files.lock(lockPath, exclusive: true)
    defer { lock.release() }
    let file = try readFile()
    let keys = try unwrap(file, passphrase: passphrase)
    _ = try openStores(file, keys: keys)
    try prepareDeviceOnlyDirectory()
    let bootID = try environment.bootID()
    let now = environment.now()
    var notAfter: Int64 = 0
    if let duration {
      notAfter = now + max(1, duration.components.seconds)
    }
    let sessionKey = try environment.randomKey()
    let runtime = try environment.runtimeDirectory()
    let keyPath = runtime + "/" + Hex.encode(file.vaultID) + ".key"
    let keyBytes = try SessionKeyFile.encode(bootID: bootID, key: sessionKey)
    try keyBytes.withUnsafeBytes { try atomicWrite($0, to: keyPath) }
    let master = try wrapCrypto { try SecureBytes(zeroedCount: 64) }
    master.withUnsafeMutableBytes { out in
      for (index, key) in [keys.sync, keys.deviceWrap].enumerated() {
        key.withUnsafeBytes {
          out.baseAddress!.advanced(by: 32 * index).copyMemory(from: $0.baseAddress!, byteCount: 32)
        }
      }
    }
    let aad = SessionFile.aad(vaultID: file.vaultID, bootID: bootID, unlockedAt: now, notAfter: notAfter)
    let sealed = try master.withUnsafeBytes { plain in
      try environment.seal(plain, sessionKey, aad)
    }
    let session = SessionFile(
      vaultID: file.vaultID, bootID: bootID, unlockedAt: now, notAfter: notAfter, sealed: sealed)
    try session.encode().withUnsafeBytes { try atomicWrite($0, to: sessionPath) }
  }

  /// Locks the vault: removes the session key from the runtime directory,
  /// then the sealed master keys from the vault directory. Locking a
  /// locked vault is not an error.
  ///
  /// - Throws: I/O errors.
  public func lock() throws {
    let lock = try Files.lock(lockPath, exclusive: true)
    defer { lock.release() }
    // The vault id comes from the vault file or, should that be damaged,
    // from the session file, so that locking always works.
    var ids = [[UInt8]]()
    if let file = try? readFile() { ids.append(file.vaultID) }
    if let bytes = try? Files.readPrivate(sessionPath, limit: SessionFile.byteCount),
      let session = SessionFile.parse(bytes)
    {
      ids.append(session.vaultID)
    }
    let fileSystem = environment.fileSystem
    try system {
      if let runtime = try? environment.runtimeDirectory() {
        for id in ids { try fileSystem.unlink(runtime + "/" + Hex.encode(id) + ".key") }
      }
      try fileSystem.unlink(sessionPath)
      if FileStatus.exists(deviceOnlyDirectory) { try fileSystem.fsyncDirectory(deviceOnlyDirectory) }
    }
  }

  /// Reports the vault's header facts and lock state; needs no passphrase.
  ///
  /// - Throws: `TaskVaultError.damaged`, `.unsupportedVersion`, permission
  ///   and I/O errors.
  public func status() throws -> VaultStatus {
    let lock = try Files.lock(lockPath, exclusive: false)
    defer { lock.release() }
    let file = try readFile()
    let state: VaultStatus.LockState
    do {
      let session = try sessionKeys(file)
      state = .unlocked(
        until: session.notAfter == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(session.notAfter)))
    } catch TaskVaultError.locked(let reason) {
      state = .locked(reason)
    } catch TaskVaultError.unlockUnavailable {
      state = .locked(.notUnlocked)
    }
    return VaultStatus(
      directory: directory, formatVersion: Int(VaultFile.version), vaultID: Hex.encode(file.vaultID),
      kdfPreset: file.preset, kdfParameters: file.kdf, created: Date(timeIntervalSince1970: TimeInterval(file.created)),
      generation: file.generation, deviceOnlyGeneration: try readDeviceFile(vaultID: file.vaultID)?.generation,
      lockState: state)
  }

  /// Changes the passphrase: a new salt and key-encryption key rewrap the
  /// synchronisable master key, and only `vault.tkv` is rewritten (one
  /// atomic rename); no item is re-encrypted, the device-only file is not
  /// touched (its wrap key derives from the unchanged master key) and the
  /// unlock state is kept.
  ///
  /// - Throws: `TaskVaultError.wrongPassphrase` for `old`,
  ///   `.emptyPassphrase` for `new`, and the errors of `unlock`.
  public func changePassphrase(from old: SecureBytes, to new: SecureBytes) throws {
    try Self.checkPassphrase(old)
    try Self.checkPassphrase(new)
    let lock = try Files.lock(lockPath, exclusive: true)
    defer { lock.release() }
    var file = try readFile()
    let keys = try unwrap(file, passphrase: old)
    _ = try openStores(file, keys: keys)
    file.salt = environment.randomBytes(PasswordKDF.saltByteCount)
    file.wrapped = try Self.wrap(keys.sync, in: file, passphrase: new, environment: environment)
    try commit(file, keys: keys)
  }

  // MARK: - Items

  /// Stores `value` under `name` in the store of `itemClass`, replacing an
  /// item of the same name and class (its created time is kept).
  ///
  /// - Parameters:
  ///   - value: at most 64 KiB, in locked memory.
  ///   - name: 1 to 128 bytes of `A-Z a-z 0-9 . _ - : @ /`.
  ///   - label: at most 256 bytes of UTF-8; when nil, the existing item's
  ///     label, or the name for a new item.
  ///   - itemClass: which store; device-only items never leave the device.
  /// - Throws: `TaskVaultError.locked`, `.invalidItemName`, `.invalidLabel`,
  ///   `.itemTooLarge`, `.itemClassConflict`, `.storeFull`, and the errors
  ///   of reading and writing the file.
  public func setItem(_ value: SecureBytes, named name: String, label: String? = nil, class itemClass: VaultItemClass)
    throws
  {
    try validateItemName(name)
    try validateLabel(label ?? name)
    guard value.count <= VaultLimits.maximumValueByteCount else {
      throw TaskVaultError.itemTooLarge(byteCount: value.count, limit: VaultLimits.maximumValueByteCount)
    }
    let now = environment.now()
    try modify { stores in
      let target = itemClass == .afterFirstUnlock ? 0 : 1
      let other: VaultItemClass = target == 0 ? .afterFirstUnlockThisDeviceOnly : .afterFirstUnlock
      if stores[1 - target].index(of: name) != nil {
        throw TaskVaultError.itemClassConflict(name: name, existing: other)
      }
      let existing = stores[target].index(of: name).map { stores[target].items[$0] }
      let copy = try value.withUnsafeBytes { raw in try wrapCrypto { try SecureBytes(copying: raw) } }
      stores[target].put(
        StoredItem(
          name: name, label: label ?? existing?.label ?? name, itemClass: itemClass, created: existing?.created ?? now,
          modified: now, value: copy))
    }
  }

  /// Returns the item named `name` with its value.
  ///
  /// - Throws: `TaskVaultError.itemNotFound`, `.locked`, and the errors of
  ///   reading the file.
  public func item(named name: String) throws -> VaultItem {
    let stores = try read()
    for store in stores {
      if let index = store.index(of: name) {
        let item = store.items[index]
        return VaultItem(attributes: item.attributes, value: item.value)
      }
    }
    throw TaskVaultError.itemNotFound(name: name)
  }

  /// Lists every item's attributes, sorted by name; values stay sealed.
  ///
  /// - Throws: `TaskVaultError.locked` and the errors of reading the file.
  public func items() throws -> [VaultItemAttributes] {
    try read().flatMap { $0.items.map(\.attributes) }.sorted {
      Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8))
    }
  }

  /// Removes the item named `name` from whichever store holds it.
  ///
  /// - Throws: `TaskVaultError.itemNotFound`, `.locked`, and the errors of
  ///   reading and writing the file.
  public func removeItem(named name: String) throws {
    try modify { stores in
      for index in stores.indices {
        if let position = stores[index].index(of: name) {
          stores[index].items.remove(at: position)
          return
        }
      }
      throw TaskVaultError.itemNotFound(name: name)
    }
  }

  /// The note keyring from the synchronisable store (made at `init`).
  ///
  /// - Throws: `TaskVaultError.locked` and the errors of reading the file.
  public func noteKeyring() throws -> Keyring {
    guard let keyring = try read()[0].keyring else {
      throw TaskVaultError.damaged(path: vaultPath, reason: "the synchronisable store has no keyring")
    }
    return keyring
  }

  /// Replaces the note keyring through `body` (rotation, promotion,
  /// retirement), under the write lock.
  ///
  /// - Throws: `TaskVaultError.locked`, what `body` throws, and the errors
  ///   of reading and writing the file.
  public func updateNoteKeyring(_ body: (inout Keyring) throws -> Void) throws {
    try modify { stores in
      guard var keyring = stores[0].keyring else {
        throw TaskVaultError.damaged(path: vaultPath, reason: "the synchronisable store has no keyring")
      }
      try body(&keyring)
      stores[0].keyring = keyring
    }
  }

  // MARK: - Reading and writing

  func read() throws -> [StoreContents] {
    let lock = try Files.lock(lockPath, exclusive: false)
    defer { lock.release() }
    let file = try readFile()
    let keys = try sessionKeys(file).keys
    return try openStores(file, keys: keys)
  }

  /// Reads both stores, runs `body`, and writes back each store whose
  /// encoding changed: the device-only file first, then `vault.tkv`.
  func modify(_ body: (inout [StoreContents]) throws -> Void) throws {
    let lock = try Files.lock(lockPath, exclusive: true)
    defer { lock.release() }
    var file = try readFile()
    let keys = try sessionKeys(file).keys
    let device = try readDeviceFile(vaultID: file.vaultID)
    var stores = try openStores(file, device: device, keys: keys)
    let before = try stores.map { try $0.encode() }
    try body(&stores)
    if !sameBytes(before[1], try stores[1].encode()) {
      try prepareDeviceOnlyDirectory()
      let deviceKey = try device.map { try unwrapDeviceKey($0, keys: keys) } ?? environment.randomKey()
      var next = DeviceFile(
        vaultID: file.vaultID,
        wrapped: try deviceKey.withUnsafeBytes { raw in
          try environment.seal(raw, keys.deviceWrap, DeviceFile.prefix(vaultID: file.vaultID) + [2])
        },
        generation: (device?.generation ?? 0) + 1,
        sealed: try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: 28)))
      let plaintext = try stores[1].encode()
      next.sealed = try plaintext.withUnsafeBytes { raw in
        try environment.seal(raw, deviceKey, DeviceFile.storeAAD(vaultID: file.vaultID, generation: next.generation))
      }
      try commitDevice(next, keys: keys)
    }
    if !sameBytes(before[0], try stores[0].encode()) {
      try seal(stores[0], into: &file, keys: keys, generation: file.generation + 1)
      try commit(file, keys: keys)
    }
  }

  private func sameBytes(_ first: SecureBytes, _ second: SecureBytes) -> Bool {
    first.withUnsafeBytes { one in second.withUnsafeBytes { two in ConstantTime.equals(one, two) } }
  }

  func readFile() throws -> VaultFile {
    guard let bytes = try Files.readPrivate(vaultPath, limit: VaultFile.maximumByteCount) else {
      throw TaskVaultError.notInitialised(path: vaultPath)
    }
    return try VaultFile.parse(bytes, path: vaultPath)
  }

  static func checkPassphrase(_ passphrase: SecureBytes) throws {
    guard passphrase.count > 0 else { throw TaskVaultError.emptyPassphrase }
    guard passphrase.count <= VaultLimits.maximumPassphraseByteCount else {
      throw TaskVaultError.passphraseTooLong(limit: VaultLimits.maximumPassphraseByteCount)
    }
  }

  /// The device-only file, or nil when it does not exist.
  func readDeviceFile(vaultID: [UInt8]) throws -> DeviceFile? {
    guard memoryName == nil else { return nil }
    guard let bytes = try Files.readPrivate(devicePath, limit: DeviceFile.maximumByteCount) else { return nil }
    return try DeviceFile.parse(bytes, path: devicePath, vaultID: vaultID)
  }

  static func wrap(
    _ key: SymmetricKey, in file: VaultFile, passphrase: SecureBytes, environment: VaultEnvironment
  ) throws -> AES.GCM.SealedBox {
    let kek = try wrapCrypto { try PasswordKDF.deriveKey(from: passphrase, salt: file.salt, parameters: file.kdf) }
    return try key.withUnsafeBytes { raw in try environment.seal(raw, kek, file.wrapAAD()) }
  }

  /// Derives the KEK and unwraps the synchronisable master key; a tag
  /// failure is a wrong passphrase.
  func unwrap(_ file: VaultFile, passphrase: SecureBytes) throws -> VaultKeys {
    try Self.checkPassphrase(passphrase)
    try hardenProcess()
    let kek = try wrapCrypto { try PasswordKDF.deriveKey(from: passphrase, salt: file.salt, parameters: file.kdf) }
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
  func unwrapDeviceKey(_ device: DeviceFile, keys: VaultKeys) throws -> SymmetricKey {
    do {
      let raw = try AES.GCM.openSecret(device.wrapped, using: keys.deviceWrap, authenticating: device.wrapAAD)
      return try wrapCrypto { try SymmetricKey(bytes: raw) }
    } catch TaskCryptoError.authenticationFailed {
      throw TaskVaultError.tampered(path: devicePath, part: "wrapped key of the device-only store")
    } catch let error as TaskCryptoError {
      throw TaskVaultError.crypto(error)
    }
  }

  /// Opens the synchronisable store and the device-only file (read from
  /// disk); a missing device-only file is an empty device-only store.
  func openStores(_ file: VaultFile, keys: VaultKeys) throws -> [StoreContents] {
    try openStores(file, device: try readDeviceFile(vaultID: file.vaultID), keys: keys)
  }

  func openStores(_ file: VaultFile, device: DeviceFile?, keys: VaultKeys) throws -> [StoreContents] {
    let sync = try openStore(
      file.sealed, key: keys.sync, aad: VaultFile.storeAAD(vaultID: file.vaultID, generation: file.generation),
      store: .synchronisable, path: vaultPath)
    guard let device else { return [sync, StoreContents(keyring: nil, items: [])] }
    let deviceKey = try unwrapDeviceKey(device, keys: keys)
    let deviceStore = try openStore(
      device.sealed, key: deviceKey, aad: DeviceFile.storeAAD(vaultID: device.vaultID, generation: device.generation),
      store: .deviceOnly, path: devicePath)
    return [sync, deviceStore]
  }

  func openStore(_ sealed: AES.GCM.SealedBox, key: SymmetricKey, aad: [UInt8], store: StoreID, path: String) throws
    -> StoreContents
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

  func seal(_ store: StoreContents, into file: inout VaultFile, keys: VaultKeys, generation: UInt64) throws {
    file.generation = generation
    let plaintext = try store.encode()
    let aad = VaultFile.storeAAD(vaultID: file.vaultID, generation: generation)
    file.sealed = try plaintext.withUnsafeBytes { raw in try environment.seal(raw, keys.sync, aad) }
  }

  /// The master keys from the unlock session, or `.locked` with the reason.
  func sessionKeys(_ file: VaultFile) throws -> (keys: VaultKeys, notAfter: Int64) {
    guard let bytes = try Files.readPrivate(sessionPath, limit: SessionFile.byteCount) else {
      throw TaskVaultError.locked(reason: .notUnlocked)
    }
    guard let session = SessionFile.parse(bytes), session.vaultID == file.vaultID else {
      throw TaskVaultError.locked(reason: .notUnlocked)
    }
    let bootID = try environment.bootID()
    guard session.bootID == bootID else { throw TaskVaultError.locked(reason: .machineRestarted) }
    if session.notAfter != 0 && environment.now() >= session.notAfter {
      throw TaskVaultError.locked(reason: .expired)
    }
    // An unsafe runtime directory is reported as such, not as "locked".
    let runtime = try environment.runtimeDirectory()
    guard
      let sessionKey = try SessionKeyFile.read(path: runtime + "/" + Hex.encode(file.vaultID) + ".key", bootID: bootID)
    else { throw TaskVaultError.locked(reason: .machineRestarted) }
    try hardenProcess()
    guard let master = try? AES.GCM.openSecret(session.sealed, using: sessionKey, authenticating: session.aad) else {
      // A session key from a later or interrupted unlock: not usable, so locked.
      throw TaskVaultError.locked(reason: .notUnlocked)
    }
    let keys = try master.withUnsafeBytes { raw in
      try wrapCrypto {
        VaultKeys(
          sync: try SymmetricKey(copying: UnsafeRawBufferPointer(rebasing: raw[0..<32])),
          deviceWrap: try SymmetricKey(copying: UnsafeRawBufferPointer(rebasing: raw[32..<64])))
      }
    }
    return (keys, session.notAfter)
  }

  /// Writes a new generation of `vault.tkv` durably.
  func commit(_ file: VaultFile, keys: VaultKeys) throws {
    try commit(
      file.encode(), path: vaultPath, previous: previousPath, temporary: temporaryPath
    ) { path in
      guard let bytes = try Files.readPrivate(path, limit: VaultFile.maximumByteCount) else {
        throw TaskVaultError.notInitialised(path: path)
      }
      let parsed = try VaultFile.parse(bytes, path: path)
      _ = try openStore(
        parsed.sealed, key: keys.sync, aad: VaultFile.storeAAD(vaultID: parsed.vaultID, generation: parsed.generation),
        store: .synchronisable, path: path)
    }
  }

  /// Writes a new generation of the device-only file durably.
  func commitDevice(_ device: DeviceFile, keys: VaultKeys) throws {
    try commit(
      device.encode(), path: devicePath, previous: devicePreviousPath, temporary: deviceTemporaryPath
    ) { path in
      guard let bytes = try Files.readPrivate(path, limit: DeviceFile.maximumByteCount) else {
        throw TaskVaultError.notInitialised(path: path)
      }
      let parsed = try DeviceFile.parse(bytes, path: path, vaultID: device.vaultID)
      _ = try openStore(
        parsed.sealed, key: try unwrapDeviceKey(parsed, keys: keys),
        aad: DeviceFile.storeAAD(vaultID: parsed.vaultID, generation: parsed.generation), store: .deviceOnly,
        path: path)
    }
  }

  /// Writes a new generation durably through TaskSystem's one replace:
  /// temporary file (O_EXCL, 0600), fsync, confirm readable, keep the old
  /// file as `<name>.prev`, rename over, fsync the directory, confirm
  /// again, drop the backup.
  func commit(
    _ bytes: [UInt8], path: String, previous: String, temporary: String, confirm: (String) throws -> Void
  ) throws {
    let fileSystem = environment.fileSystem
    try system {
      try bytes.withUnsafeBytes {
        try fileSystem.replace(path, contents: $0, temporary: temporary, previous: previous, confirm: confirm)
      }
    }
  }

  /// Writes a small file by temporary file (`<path>.tmp`), fsync and rename.
  func atomicWrite(_ bytes: UnsafeRawBufferPointer, to path: String) throws {
    let fileSystem = environment.fileSystem
    try system { try fileSystem.replace(path, contents: bytes) }
  }
}

/// Disables core dumps and ptrace attach for this process, once keys are in it.
func hardenProcess() throws {
  try system { try ProcessHardening.disableCoreDumps() }
}

/// The keys an unlocked vault holds: the synchronisable store's master key
/// and the key derived from it that wraps the device-only master key.
struct VaultKeys {
  let sync: SymmetricKey
  let deviceWrap: SymmetricKey

  init(sync: SymmetricKey, deviceWrap: SymmetricKey) {
    self.sync = sync
    self.deviceWrap = deviceWrap
  }

  /// Both keys, for tests that search files for them.
  var all: [SymmetricKey] { [sync, deviceWrap] }

  init(sync: SymmetricKey, vaultID: [UInt8]) throws {
    self.init(sync: sync, deviceWrap: try DeviceFile.wrapKey(syncMasterKey: sync, vaultID: vaultID))
  }
}
