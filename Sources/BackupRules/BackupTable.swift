import AssistantKeys
import TaskVault

/// Every kind of thing TaskKey keeps on a device.
public enum KeptThing: String, Sendable, Equatable, CaseIterable {
  /// The note keyring (every note key and which is primary).
  case noteKeyring = "note keyring"
  /// Items of class after-first-unlock.
  case synchronisableItems = "synchronisable items"
  /// Items of class after-first-unlock-this-device-only (AI-provider keys).
  case deviceOnlyItems = "device-only items"
  /// The assistant key registry (digests and metadata of assistant keys).
  case assistantRegistry = "assistant key registry"
  /// The registry's integrity key (a device-only item).
  case assistantRegistryKey = "assistant registry integrity key"
  /// When each assistant key was last used.
  case assistantLastUsed = "assistant last-used file"
  /// The registry's lock file.
  case assistantLock = "assistant registry lock file"
  /// The unlock session file (master keys sealed under the session key).
  case unlockSession = "unlock session file"
  /// The session key in tmpfs.
  case sessionKey = "session key (tmpfs)"
  /// The previous generation of `vault.tkv`, present only during a write.
  case vaultPreviousGeneration = "vault.tkv previous generation"
  /// The temporary file of a `vault.tkv` write.
  case vaultTemporaryFile = "vault.tkv temporary file"
  /// The previous generation and temporary file of a device-only write.
  case deviceOnlyWriteFiles = "device-only previous generation and temporary files"
  /// The vault's lock file.
  case vaultLock = "vault lock file"
  /// Attachment files: not kept by TaskKey (the Tasker app stores them).
  case attachmentFiles = "attachment files"
}

/// One row of the backup table: where a thing lives and which copies may
/// hold it.
public struct BackupRule: Sendable, Equatable {
  /// What is kept.
  public let thing: KeptThing
  /// Where, relative to the vault directory (or an absolute path outside
  /// it); nil when TaskKey keeps no such file.
  public let location: String?
  /// Whether `taskkey backup create` puts it into the backup file.
  public let inTaskKeyBackup: Bool
  /// Whether `taskkey sync export` puts it into a sync bundle.
  public let inSyncBundle: Bool
  /// Whether a system backup of the data directory that honours the
  /// exclusion markers (tar/borg/restic `--exclude-caches`) carries it.
  public let inSystemBackup: Bool
  /// Why, in one sentence.
  public let reason: String
}

extension BackupRules {
  /// The table: every kind of thing TaskKey keeps, and whether a TaskKey
  /// backup, a sync bundle and a system backup carry it. SECURITY.md
  /// ("Backups") prints the same table; `BackupTableTests` checks every row
  /// against what the code does.
  public static let table: [BackupRule] = {
    let vault = VaultLayout.vaultFileName
    let device = VaultLayout.deviceOnlyDirectoryName + "/"
    let deviceFile = device + VaultLayout.deviceFileName
    typealias Registry = AssistantKeyRegistry.FileName
    return [
      BackupRule(
        thing: .noteKeyring, location: vault, inTaskKeyBackup: true, inSyncBundle: true, inSystemBackup: true,
        reason: "synchronisable by design; sealed under the passphrase-wrapped master key"),
      BackupRule(
        thing: .synchronisableItems, location: vault, inTaskKeyBackup: true, inSyncBundle: true,
        inSystemBackup: true, reason: "synchronisable by design; in the same sealed store as the keyring"),
      BackupRule(
        thing: .deviceOnlyItems, location: deviceFile, inTaskKeyBackup: false, inSyncBundle: false,
        inSystemBackup: false, reason: "device-only keys never leave the device"),
      BackupRule(
        thing: .assistantRegistry, location: device + Registry.registry, inTaskKeyBackup: false,
        inSyncBundle: false, inSystemBackup: false,
        reason: "a restored assistant starts without a key (fail closed)"),
      BackupRule(
        thing: .assistantRegistryKey, location: deviceFile, inTaskKeyBackup: false, inSyncBundle: false,
        inSystemBackup: false, reason: "a device-only item; without it a stray registry is refused as damaged"),
      BackupRule(
        thing: .assistantLastUsed, location: device + Registry.lastUsed, inTaskKeyBackup: false,
        inSyncBundle: false, inSystemBackup: false, reason: "belongs with the registry"),
      BackupRule(
        thing: .assistantLock, location: device + Registry.lock, inTaskKeyBackup: false,
        inSyncBundle: false, inSystemBackup: false, reason: "empty; lives in the excluded directory"),
      BackupRule(
        thing: .unlockSession, location: device + VaultLayout.sessionFileName, inTaskKeyBackup: false,
        inSyncBundle: false,
        inSystemBackup: false, reason: "the unlocked state ends with the boot; a copy is useless and is not made"),
      BackupRule(
        thing: .sessionKey, location: "/dev/shm/taskkey-<uid>/<vault id>.key", inTaskKeyBackup: false,
        inSyncBundle: false, inSystemBackup: false, reason: "in tmpfs, outside the data directory; gone at reboot"),
      BackupRule(
        thing: .vaultPreviousGeneration, location: vault + VaultLayout.previousSuffix, inTaskKeyBackup: false,
        inSyncBundle: false,
        inSystemBackup: true, reason: "exists only during a write; the synchronisable store only, sealed"),
      BackupRule(
        thing: .vaultTemporaryFile, location: vault + VaultLayout.temporarySuffix, inTaskKeyBackup: false,
        inSyncBundle: false,
        inSystemBackup: true, reason: "exists only during a write; the synchronisable store only, sealed"),
      BackupRule(
        thing: .deviceOnlyWriteFiles, location: deviceFile + VaultLayout.previousSuffix, inTaskKeyBackup: false,
        inSyncBundle: false, inSystemBackup: false, reason: "device-only, in the excluded directory"),
      BackupRule(
        thing: .vaultLock, location: VaultLayout.lockFileName, inTaskKeyBackup: false, inSyncBundle: false,
        inSystemBackup: true,
        reason: "empty; harmless"),
      BackupRule(
        thing: .attachmentFiles, location: nil, inTaskKeyBackup: false, inSyncBundle: false, inSystemBackup: false,
        reason: "not kept by TaskKey: the Tasker app stores attachment files, sealed with TaskCrypto, on its own"),
    ]
  }()

  /// The row for `thing`.
  public static func rule(for thing: KeptThing) -> BackupRule {
    table.first { $0.thing == thing }!
  }
}
