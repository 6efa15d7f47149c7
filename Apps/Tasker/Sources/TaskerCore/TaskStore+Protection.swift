import FoundationEssentials
import TaskCrypto
import TaskSystem
import TaskVault

/// A place that keeps each database's protection settings out of the
/// database's reach: the TaskKey vault (`VaultKeySource`).
public protocol ProtectionRecords {
  /// The settings recorded for the database at `canonicalPath`, or nil
  /// when none are recorded (the store then uses `ProtectionSettings.defaults`).
  ///
  /// - Throws: `TaskerError.vaultLocked` (nothing can be known while the
  ///   vault is locked), `.protectionSettingsUnreadable`, `.vault`.
  func recordedProtection(forDatabase canonicalPath: String) throws -> ProtectionSettings?

  /// Records `settings` for the database at `canonicalPath`.
  ///
  /// - Throws: `TaskerError.vaultLocked`, `.vaultNotFound`,
  ///   `.noVaultLocation`, `.vault`.
  func recordProtection(_ settings: ProtectionSettings, forDatabase canonicalPath: String) throws
}

extension NoteKeySource {
  /// A source keeps no protection settings unless it says so.
  public var protectionRecords: (any ProtectionRecords)? { nil }
}

extension VaultKeySource: ProtectionRecords {
  /// The vault: protection settings are device-only items in it.
  public var protectionRecords: (any ProtectionRecords)? { self }

  /// Reads the item `ProtectionRecord.itemName(forDatabase:)`. No vault
  /// (or no vault location) means nothing is recorded; a locked vault is
  /// an error, because then it cannot be known whether sealing was chosen.
  ///
  /// - Throws: `TaskerError.vaultLocked`, `.protectionSettingsUnreadable`
  ///   (a damaged item, or one recorded for another database), `.vault`.
  public func recordedProtection(forDatabase canonicalPath: String) throws -> ProtectionSettings? {
    guard let directory else { return nil }
    let name = ProtectionRecord.itemName(forDatabase: canonicalPath)
    let item: VaultItem
    do {
      item = try Vault(at: directory).item(named: name)
    } catch let error as TaskVaultError {
      switch error {
      case .itemNotFound, .notInitialised: return nil
      case .locked(let reason): throw TaskerError.vaultLocked(reason: reason)
      default: throw TaskerError.vault(error)
      }
    }
    // Two words and a path, not a secret: an ordinary copy is fine.
    let bytes = item.value.withUnsafeBytes { Array($0) }
    do {
      return try ProtectionRecord.decode(bytes, database: canonicalPath)
    } catch {
      throw TaskerError.protectionSettingsUnreadable(item: name, problem: error)
    }
  }

  /// Writes the item in the vault's device-only store (it never travels
  /// in a sync bundle or a backup of the synchronisable store).
  ///
  /// - Throws: `TaskerError.noVaultLocation`, `.vaultNotFound`,
  ///   `.vaultLocked`, `.vault`.
  public func recordProtection(_ settings: ProtectionSettings, forDatabase canonicalPath: String) throws {
    guard let directory else { throw TaskerError.noVaultLocation }
    let bytes = ProtectionRecord.encode(settings, database: canonicalPath)
    do {
      let value = try bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
      try Vault(at: directory).setItem(
        value, named: ProtectionRecord.itemName(forDatabase: canonicalPath), label: "Tasker protection settings",
        class: .afterFirstUnlockThisDeviceOnly)
    } catch let error as TaskVaultError {
      switch error {
      case .locked(let reason): throw TaskerError.vaultLocked(reason: reason)
      case .notInitialised: throw TaskerError.vaultNotFound(path: directory)
      default: throw TaskerError.vault(error)
      }
    }
  }
}

extension TaskStore {
  /// The protection settings in force for this database: what the key
  /// source recorded for it, else `ProtectionSettings.defaults`. Nothing
  /// in the database is read, so no database writer can weaken them.
  ///
  /// - Throws: `TaskerError.vaultLocked`, `.protectionSettingsUnreadable`,
  ///   `.vault`, `.system` (the database's path cannot be resolved).
  public func protectionSettings() throws -> ProtectionSettings {
    guard let protectionRecords else { return keptProtection }
    return try protectionRecords.recordedProtection(forDatabase: canonicalDatabasePath()) ?? .defaults
  }

  /// Whether new note text and page bodies are sealed (on by default).
  ///
  /// - Throws: as `protectionSettings()`.
  public func bodyEncryption() throws -> Bool {
    try protectionSettings().bodyEncryption
  }

  /// Turns sealing of new bodies on or off, recording the choice in the
  /// vault (so turning it either way needs the vault unlocked). Turning it
  /// off does not open bodies already sealed; `tasker encrypt` seals the
  /// plain ones.
  ///
  /// - Throws: as `changeProtection(_:)`.
  public func setBodyEncryption(_ on: Bool) throws {
    try changeProtection { $0.bodyEncryption = on }
  }

  /// Whether new attachment files are sealed (off by default).
  ///
  /// - Throws: as `protectionSettings()`.
  public func attachmentEncryption() throws -> Bool {
    try protectionSettings().attachmentEncryption
  }

  /// Turns sealing of new attachment files on or off, recorded in the
  /// vault; files already stored stay as they are.
  ///
  /// - Throws: as `changeProtection(_:)`.
  public func setAttachmentEncryption(_ on: Bool) throws {
    try changeProtection { $0.attachmentEncryption = on }
  }

  /// Applies `change` to the settings in force and records the result.
  /// When the recorded item cannot be read, the change starts from
  /// `ProtectionSettings.strongest`, so the setting not being changed is
  /// on afterwards: a damaged record never turns sealing off.
  ///
  /// - Returns: the settings now in force.
  /// - Throws: `TaskerError.vaultLocked`, `.vaultNotFound`,
  ///   `.noVaultLocation`, `.vault`, `.system`.
  @discardableResult
  public func changeProtection(_ change: (inout ProtectionSettings) -> Void) throws -> ProtectionSettings {
    guard let protectionRecords else {
      change(&keptProtection)
      return keptProtection
    }
    let path = try canonicalDatabasePath()
    var settings: ProtectionSettings
    do {
      settings = try protectionRecords.recordedProtection(forDatabase: path) ?? .defaults
    } catch TaskerError.protectionSettingsUnreadable {
      settings = .strongest
    }
    change(&settings)
    try protectionRecords.recordProtection(settings, forDatabase: path)
    return settings
  }

  /// The database file's path with every symlink and `..` resolved: the
  /// key of its protection record.
  ///
  /// - Throws: `TaskerError.system`.
  public func canonicalDatabasePath() throws -> String {
    try TaskerFiles.system { try FileStatus.canonicalPath(databasePath) }
  }
}
