import AssistantKeys
import FoundationEssentials
import TaskCrypto
import TaskSystem
import TaskVault

/// What may go into a backup and what never does, and TaskKey's own
/// backup and restore.
///
/// A backup file carries `vault.tkv` alone — the note keyring and the
/// synchronisable items, sealed as in the vault — inside an authenticated,
/// versioned envelope. Device-only items, the assistant registry and its
/// key, the unlock session and every other file of `device-only/` are
/// never read into it: `Vault.snapshotForBackup()` does not open them.
public enum BackupRules {
  /// The largest backup file read, in bytes.
  public static let maximumBackupByteCount = BackupFile.maximumByteCount

  /// Writes a backup of an unlocked vault to a new file (TaskSystem's
  /// durable create: mode 0600, `O_EXCL`, fsynced, directory fsynced).
  ///
  /// - Parameters:
  ///   - vault: the vault; it must be unlocked, since the backup's tag is
  ///     keyed from its master key.
  ///   - path: the new file; an existing file is never overwritten.
  ///   - now: the creation time recorded in the header.
  /// - Returns: what went in.
  /// - Throws: `BackupError.outputExists`, `.system`, `.vault(.locked)` and
  ///   the vault's read errors.
  @discardableResult
  public static func backup(_ vault: Vault, to path: String, now: Date = Date()) throws -> BackupSummary {
    let made = try backup(vault, now: now)
    do {
      try PosixFileSystem().createNew(path, contents: made.bytes)
    } catch let error as SystemError where error.isAlreadyExisting {
      throw BackupError.outputExists(path: path)
    } catch let error as SystemError {
      throw BackupError.system(error)
    }
    return made.summary
  }

  /// Makes a backup of an unlocked vault in memory, for a caller that
  /// writes it elsewhere (`backup create --out -` writes it to standard
  /// output).
  ///
  /// - Returns: the backup file's bytes and what went in.
  /// - Throws: `BackupError.vault(.locked)` and the vault's read errors.
  public static func backup(_ vault: Vault, now: Date = Date()) throws -> (bytes: [UInt8], summary: BackupSummary) {
    let snapshot = try vaultCall { try vault.snapshotForBackup() }
    let created = Int64(now.timeIntervalSince1970)
    return (BackupFile.encode(snapshot, created: created), BackupSummary(snapshot, created: created))
  }

  /// Opens a backup file's bytes with the passphrase and checks every
  /// rule of the format, without writing anything.
  ///
  /// - Returns: what the backup holds.
  /// - Throws: `BackupError.damaged`, `.unsupportedVersion`, `.tampered`
  ///   for the backup itself; `.vault(.wrongPassphrase)`, `.vault(.damaged)`,
  ///   `.vault(.tampered)`, `.vault(.unsupportedVersion)` for the vault file
  ///   inside.
  public static func inspect(_ bytes: [UInt8], passphrase: SecureBytes, path: String = "backup") throws
    -> BackupSummary
  {
    let opened = try BackupFile.open(bytes, passphrase: passphrase, path: path)
    return BackupSummary(opened.snapshot, created: opened.created)
  }

  /// Restores a backup into `directory`, which must not exist or be empty;
  /// with `force`, an existing directory is first renamed to
  /// `<directory>.before-restore-<UTC time>` and kept, never deleted.
  ///
  /// The backup is checked in full (passphrase and tag) before anything
  /// is touched. The restored vault holds the note keyring and the
  /// synchronisable items; its device-only store and assistant registry
  /// start empty, so every assistant needs a new key. It is left locked.
  ///
  /// - Returns: the report, which says what is absent and what to do.
  /// - Throws: the errors of `inspect`, `BackupError.targetNotEmpty`,
  ///   `.system`, `.vault`.
  public static func restore(
    from path: String, into directory: String, passphrase: SecureBytes, force: Bool = false, now: Date = Date()
  ) throws -> RestoreReport {
    let bytes = try readFile(path, limit: maximumBackupByteCount)
    return try restore(bytes, named: path, into: directory, passphrase: passphrase, force: force, now: now)
  }

  /// Restores a backup held in memory (`backup restore -` reads it from
  /// standard input), exactly as `restore(from:into:passphrase:force:now:)`.
  ///
  /// - Parameter path: how errors name the backup.
  public static func restore(
    _ bytes: [UInt8], named path: String, into directory: String, passphrase: SecureBytes, force: Bool = false,
    now: Date = Date()
  ) throws -> RestoreReport {
    let opened = try BackupFile.open(bytes, passphrase: passphrase, path: path)
    var movedAside: String?
    removeIncompleteRestore(directory)
    if try !isEmptyOrMissing(directory) {
      guard force else { throw BackupError.targetNotEmpty(path: directory) }
      let aside = try asideName(for: directory, now: now)
      do {
        try PosixFileSystem().move(directory, to: aside)
      } catch let error as SystemError {
        throw BackupError.system(error)
      }
      movedAside = aside
    }
    let vault = try installAtomically(opened.snapshot, at: directory)
    return RestoreReport(
      directory: vault.directory, backup: BackupSummary(opened.snapshot, created: opened.created),
      movedAsideTo: movedAside)
  }

  /// Builds the restored vault in a private sibling directory
  /// (`<directory>.restoring-<16 hex>`) and renames it into place (over
  /// `directory` when that is an empty directory), then syncs the parent:
  /// a restore stopped part way leaves the target as it was, and the next
  /// restore removes the half-built sibling.
  static func installAtomically(_ snapshot: VaultFileSnapshot, at directory: String) throws -> Vault {
    let target = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    let staging = target + stagingInfix + Hex.encode(SecureRandom.bytes(count: 8))
    _ = try vaultCall { try Vault.install(snapshot, at: staging) }
    do {
      try PosixFileSystem().move(staging, to: target)
      try PosixFileSystem().fsyncDirectory(PosixFileSystem.directory(of: target))
    } catch let error as SystemError {
      try? FileManager.default.removeItem(atPath: staging)
      throw BackupError.system(error)
    }
    return try vaultCall { try Vault(at: target) }
  }

  /// What names a half-built restore beside its target.
  static let stagingInfix = ".restoring-"

  /// Removes what a restore stopped part way left: half-built siblings
  /// `<directory>.restoring-*` owned by the user, and a target holding only
  /// the files an earlier, non-atomic restore made before `vault.tkv`
  /// (`vault.lock`, `device-only/` with its markers and lock). A target
  /// with anything else in it is left alone (and refused as not empty).
  static func removeIncompleteRestore(_ directory: String) {
    let target = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    let parent = PosixFileSystem.directory(of: target)
    let base = target.split(separator: "/").last.map(String.init) ?? target
    for name in (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
    where name.hasPrefix(base + stagingInfix) {
      let path = parent + "/" + name
      if let status = try? FileStatus.of(path), status.kind == .directory, status.isOwnedByUser {
        try? FileManager.default.removeItem(atPath: path)
      }
    }
    let leftovers: Set<String> = [
      VaultLayout.lockFileName, VaultLayout.vaultFileName + VaultLayout.temporarySuffix,
      VaultLayout.deviceOnlyDirectoryName,
    ]
    let deviceLeftovers: Set<String> = [
      ExclusionMarker.cacheDirectoryTag.rawValue, ExclusionMarker.noBackupFile.rawValue,
      AssistantKeyRegistry.FileName.lock, VaultLayout.deviceFileName + VaultLayout.temporarySuffix,
    ]
    guard let status = try? FileStatus.of(target), status.kind == .directory, status.isOwnedByUser,
      let entries = try? FileManager.default.contentsOfDirectory(atPath: target), !entries.isEmpty,
      Set(entries).isSubset(of: leftovers)
    else { return }
    let device = target + "/" + VaultLayout.deviceOnlyDirectoryName
    let deviceEntries = (try? FileManager.default.contentsOfDirectory(atPath: device)) ?? []
    guard Set(deviceEntries).isSubset(of: deviceLeftovers) else { return }
    try? FileManager.default.removeItem(atPath: device)
    for name in entries where name != VaultLayout.deviceOnlyDirectoryName {
      try? FileManager.default.removeItem(atPath: target + "/" + name)
    }
  }

  static func isEmptyOrMissing(_ directory: String) throws -> Bool {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
      return !FileStatus.exists(directory)
    }
    return entries.isEmpty
  }

  static func asideName(for directory: String, now: Date) throws -> String {
    // yyyyMMdd'T'HHmmss'Z' in UTC.
    let time = CivilTime.utc(now.timeIntervalSince1970)
    let stamp =
      [time.year, time.month, time.day].enumerated().map { CivilTime.pad($1, $0 == 0 ? 4 : 2) }.joined()
      + "T" + [time.hour, time.minute, time.second].map { CivilTime.pad($0) }.joined() + "Z"
    let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    let stem = base + ".before-restore-" + stamp
    var candidate = stem
    var counter = 1
    while FileStatus.exists(candidate) {
      counter += 1
      candidate = stem + "-\(counter)"
    }
    return candidate
  }

  static func readFile(_ path: String, limit: Int) throws -> [UInt8] {
    do {
      return try OpenFile.reading(path).readAll(limit: limit)
    } catch SystemError.tooLarge {
      throw BackupError.damaged(path: path, reason: "larger than the limit of \(limit) bytes")
    } catch let error as SystemError {
      throw BackupError.system(error)
    }
  }
}

/// What a backup holds; nothing secret.
public struct BackupSummary: Sendable, Equatable {
  /// The vault id, 32 lowercase hex digits.
  public let vaultID: String
  /// The generation of the `vault.tkv` inside.
  public let generation: UInt64
  /// When the backup was made, seconds since 1970.
  public let created: Int64
  /// How many note keys it carries.
  public let noteKeyCount: Int
  /// The synchronisable items' names, sorted.
  public let itemNames: [String]

  init(_ snapshot: VaultFileSnapshot, created: Int64) {
    vaultID = Hex.encode(snapshot.vaultID)
    generation = snapshot.generation
    self.created = created
    noteKeyCount = snapshot.noteKeyCount
    itemNames = snapshot.itemNames
  }
}

/// What a restore did and what it could not bring back.
public struct RestoreReport: Sendable, Equatable {
  /// The restored vault's directory.
  public let directory: String
  /// What the backup held (all of it was restored).
  public let backup: BackupSummary
  /// Where the directory that was there before went (`--force`), or nil.
  public let movedAsideTo: String?
  /// Always true: device-only items are never in a backup, so the
  /// device-only store starts empty; set those items again.
  public var deviceOnlyItemsAbsent: Bool { true }
  /// Always true: the assistant registry is never in a backup, so it
  /// starts empty and every assistant must be given a new key.
  public var everyAssistantNeedsANewKey: Bool { true }
  /// The report's lines, for people.
  public var lines: [String] {
    var lines = [
      "Restored vault \(backup.vaultID) (generation \(backup.generation)) into \(directory).",
      "Note keys: \(backup.noteKeyCount); synchronisable items: \(backup.itemNames.count).",
      "Device-only items: absent (never in a backup); set them again with 'taskkey item set --device-only'.",
      "Assistant keys: the registry starts empty; every assistant needs a new key ('taskkey mint').",
      "The vault is locked; run 'taskkey unlock'.",
    ]
    if let movedAsideTo { lines.insert("The previous directory was moved to \(movedAsideTo) (kept).", at: 1) }
    return lines
  }
}
