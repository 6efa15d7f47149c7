import FoundationEssentials
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
  /// Every file of this vault, named in one place.
  public let layout: VaultLayout
  let environment: VaultEnvironment

  /// The unlock session of this vault.
  var session: UnlockSession { UnlockSession(layout: layout, environment: environment) }

  /// The subdirectory that holds everything that must never leave this
  /// device: `<vault>/device-only`, marked with `CACHEDIR.TAG`, `.nobackup`
  /// and the `user.xdg.robots.backup` attribute.
  public var deviceOnlyDirectory: String { layout.deviceOnlyDirectory }

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
  /// - Throws: `TaskVaultError.notInitialised`, `.system` (loose
  ///   permissions, another owner, another user's symlink, wrong file type,
  ///   a failed call).
  public convenience init(at directory: String) throws {
    try self.init(at: directory, environment: .production)
  }

  init(at directory: String, environment: VaultEnvironment) throws {
    self.directory = directory
    self.layout = VaultLayout(directory: directory)
    self.environment = environment
    guard try system({ try PrivateDirectory.check(directory) }) else {
      throw TaskVaultError.notInitialised(path: directory)
    }
    guard try Files.privateFileExists(layout.vaultFile) else {
      throw TaskVaultError.notInitialised(path: layout.vaultFile)
    }
  }

  /// A vault in a directory whose files are about to be written.
  init(unchecked directory: String, environment: VaultEnvironment) {
    self.directory = directory
    self.layout = VaultLayout(directory: directory)
    self.environment = environment
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
  ///   `.passphraseTooLong`, `.system`.
  public static func create(at directory: String, passphrase: SecureBytes, preset: KDFPreset = .calibrated) throws
    -> Vault
  {
    try create(at: directory, passphrase: passphrase, preset: preset, environment: .production)
  }

  static func create(
    at directory: String, passphrase: SecureBytes, preset: KDFPreset, environment: VaultEnvironment
  ) throws -> Vault {
    try writeNew(at: directory, passphrase: passphrase, preset: preset, environment: environment) {
      StoreContents(
        keyring: Keyring(
          primary: NoteKey(
            id: KeyID(rawValue: environment.randomBytes(4).reduce(0) { $0 << 8 | UInt32($1) }),
            key: try environment.randomKey())), items: [])
    }
  }

  /// Writes a new vault whose synchronisable store is `store()` (made
  /// under the vault's lock, after the checks): the directory and
  /// `device-only/` first, `vault.tkv` last and whole, so a process killed
  /// on the way leaves no vault.
  static func writeNew(
    at directory: String, passphrase: SecureBytes, preset: KDFPreset, environment: VaultEnvironment,
    unlocking: Bool = false, store: () throws -> StoreContents
  ) throws -> Vault {
    try VaultCodec.checkPassphrase(passphrase)
    let parameters = preset == .fastTestOnly ? VaultKDF.fastTestParameters : try VaultKDF.calibrate()
    let vault = try prepareNew(at: directory, environment: environment)
    let lock = try Files.lock(vault.layout.lockFile, exclusive: true)
    defer { lock.release() }
    try vault.refuseExistingVault()
    try hardenProcess()
    let syncKey = try environment.randomKey()
    // Made here, in this order, so the deterministic vector generator draws the same bytes as before.
    let contents = try store()
    var file = VaultFile(
      vaultID: environment.randomBytes(16), preset: preset, kdf: parameters,
      salt: environment.randomBytes(PasswordKDF.saltByteCount), created: environment.now(),
      wrapped: try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: wrappedKeyByteCount)), generation: 0,
      sealed: try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: 28)))
    file.wrapped = try vault.wrap(syncKey, in: file, passphrase: passphrase)
    try vault.prepareDeviceOnlyDirectory()
    let keys = try VaultKeys(sync: syncKey, vaultID: file.vaultID)
    try vault.seal(contents, into: &file, keys: keys, generation: 1)
    try vault.commit(file, keys: keys)
    // With the keys in hand, the unlock session starts without a second KDF.
    if unlocking { try vault.session.begin(file: file, keys: keys, for: nil) }
    return vault
  }

  /// Makes the directory (0700, with parents) of a vault about to be
  /// written.
  static func prepareNew(at directory: String, environment: VaultEnvironment) throws -> Vault {
    // Another user who can write a parent could move the vault away.
    try system { try PrivateDirectory.checkAncestors(of: directory) }
    try system { try PrivateDirectory.make(directory) }
    return Vault(unchecked: directory, environment: environment)
  }

  /// Refuses to write over an existing `vault.tkv`.
  func refuseExistingVault() throws {
    guard try !Files.privateFileExists(layout.vaultFile) else {
      throw TaskVaultError.alreadyInitialised(path: layout.vaultFile)
    }
  }

  // MARK: - Unlocking

  /// Unlocks the vault for every process of this user until the machine
  /// restarts, `lock()` runs, or `duration` passes.
  ///
  /// The passphrase unwraps the synchronisable master key and both stores
  /// are checked (a missing device-only file is an empty store); then the
  /// unlock session begins (see `UnlockSession`). The passphrase itself is
  /// never stored.
  ///
  /// - Parameters:
  ///   - passphrase: the vault's passphrase.
  ///   - duration: an optional time limit.
  /// - Throws: `TaskVaultError.wrongPassphrase`, `.emptyPassphrase`,
  ///   `.damaged`, `.tampered`, `.unsupportedVersion`,
  ///   `.unlockUnavailable`, `.system`.
  public func unlock(passphrase: SecureBytes, for duration: Duration? = nil) throws {
    try VaultCodec.checkPassphrase(passphrase)
    let lock = try Files.lock(layout.lockFile, exclusive: true)
    defer { lock.release() }
    let file = try readFile()
    // The device-only file's checks that need no key (its steps 1 to 5) run
    // before the KDF, as the vault file's step 6 says, so a damaged,
    // unsupported or foreign device-only file is reported as such whatever
    // passphrase is given.
    let device = try readDeviceFile(vaultID: file.vaultID)
    let keys = try VaultCodec.unwrap(file, passphrase: passphrase)
    _ = try VaultCodec.openStores(
      file, device: device, keys: keys, vaultPath: layout.vaultFile, devicePath: layout.deviceFile)
    try prepareDeviceOnlyDirectory()
    try session.begin(file: file, keys: keys, for: duration)
  }

  /// Locks the vault: removes the session key from the runtime directory,
  /// then the sealed master keys from the vault directory. Locking a
  /// locked vault is not an error.
  ///
  /// - Throws: `TaskVaultError.system`.
  public func lock() throws {
    let lock = try Files.lock(layout.lockFile, exclusive: true)
    defer { lock.release() }
    // The vault id comes from the vault file or, should that be damaged,
    // from the session file, so that locking always works.
    try session.end(vaultID: (try? readFile())?.vaultID)
  }

  /// Reports the vault's header facts and lock state; needs no passphrase.
  ///
  /// - Throws: `TaskVaultError.damaged`, `.unsupportedVersion`, `.system`.
  public func status() throws -> VaultStatus {
    let lock = try Files.lock(layout.lockFile, exclusive: false)
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
    try VaultCodec.checkPassphrase(old)
    try VaultCodec.checkPassphrase(new)
    let lock = try Files.lock(layout.lockFile, exclusive: true)
    defer { lock.release() }
    var file = try readFile()
    let keys = try VaultCodec.unwrap(file, passphrase: old)
    _ = try openStores(file, keys: keys)
    let running = try? sessionKeys(file)
    file.salt = environment.randomBytes(PasswordKDF.saltByteCount)
    file.wrapped = try wrap(keys.sync, in: file, passphrase: new)
    // The session binds the header, which is about to change. It ends
    // once the new header is staged (written and synced beside the old
    // one) and before it is renamed into place, so a process stopped in
    // between leaves the vault locked (either passphrase's header opens),
    // never a session bound to the header that is gone, which reads as
    // tampering; and a full disk or a lack of inodes, which fails the
    // staging, leaves every file as it was. It ends even when the running
    // session could not be read (an I/O error is not "locked"); ending a
    // locked vault's session changes nothing.
    var ended = false
    do {
      try commit(file, keys: keys) {
        ended = true
        try session.end(vaultID: file.vaultID)
      }
    } catch {
      // Keep the unlock state over whichever header is on disk now.
      if ended, let running, let onDisk = try? readFile() {
        try? session.begin(file: onDisk, keys: keys, notAfter: running.notAfter)
      }
      throw error
    }
    // Bind the new header (same time limit); if that fails, stay locked.
    guard let running else { return }
    do {
      try session.begin(file: file, keys: keys, notAfter: running.notAfter)
    } catch {
      try? session.end(vaultID: file.vaultID)
      throw error
    }
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
