import AssistantKeys
import FoundationEssentials
import TaskCrypto
import TaskSystem
import TaskVault

/// One thing `BackupRules.doctor` looked at.
public struct DoctorFinding: Sendable, Equatable {
  /// How serious it is.
  public enum Severity: String, Sendable, Equatable {
    /// All is well; for information.
    case ok
    /// Worth knowing, nothing to repair (for example a weak test KDF).
    case warning
    /// Something is wrong: a missing marker, a loose permission.
    case problem
  }
  /// A stable identifier: `permissions`, `vault`, `marker`, `xattr-unsupported`,
  /// `unlock-state`, `kdf`, `key-usage`, `device-only-store`, `registry`,
  /// `runtime-dir`, `leftover-file`.
  public let check: String
  /// How serious.
  public let severity: Severity
  /// One line for people; no secrets.
  public let message: String
  /// True when `repair` fixed it in this run.
  public let repaired: Bool
}

/// What `BackupRules.doctor` found.
public struct DoctorReport: Sendable, Equatable {
  /// Every finding, in the order checked.
  public let findings: [DoctorFinding]
  /// True when no problem is left unrepaired.
  public var healthy: Bool { !findings.contains { $0.severity == .problem && !$0.repaired } }
}

extension BackupRules {
  /// Checks a vault directory: owner-only permissions on every file and
  /// directory, the exclusion markers of `device-only/`, the unlock state,
  /// the KDF strength, the device-only store and leftover write files.
  /// With `repair`, tightens loose modes (0700 directories, 0600 files;
  /// symlinks and other owners' files are reported, never touched) and
  /// re-creates missing markers.
  ///
  /// - Throws: `BackupError.vault(.notInitialised)` when there is no vault.
  public static func doctor(directory: String, repair: Bool) throws -> DoctorReport {
    var findings = [DoctorFinding]()
    let layout = VaultLayout(directory: directory)
    guard FileStatus.exists(layout.vaultFile) else {
      throw BackupError.vault(.notInitialised(path: layout.vaultFile))
    }
    findings += checkPermissions(directory, repair: repair)
    let markers = try vaultCall { try Vault.exclusionMarkerState(ofVaultAt: directory) }
    let vault: Vault
    do {
      vault = try Vault(at: directory)
    } catch let error as TaskVaultError {
      findings.append(
        .init(
          check: "vault", severity: .problem, message: "the vault cannot be opened: \(error)", repaired: false))
      for marker in markers.missing {
        findings.append(
          .init(
            check: "marker", severity: .problem, message: "\(marker.rawValue) is missing from device-only/",
            repaired: false))
      }
      return DoctorReport(findings: findings)
    }
    var repairedMarkers = false
    if repair && !markers.missing.isEmpty {
      try vaultCall { try vault.prepareDeviceOnlyDirectory() }
      repairedMarkers = true
    }
    for marker in ExclusionMarker.allCases {
      if markers.present.contains(marker) {
        findings.append(
          .init(check: "marker", severity: .ok, message: "\(marker.rawValue) is in place", repaired: false))
      } else if markers.missing.contains(marker) {
        findings.append(
          .init(
            check: "marker", severity: .problem,
            message: "\(marker.rawValue) is missing from device-only/"
              + (repairedMarkers ? "; re-created" : "; run 'taskkey doctor --repair'"),
            repaired: repairedMarkers))
      }
    }
    if markers.attributeUnsupported {
      findings.append(
        .init(
          check: "xattr-unsupported", severity: .warning,
          message:
            "this file system has no user extended attributes, so \(ExclusionMarker.backupAttribute.rawValue) cannot be set; CACHEDIR.TAG and .nobackup still apply",
          repaired: false))
    }
    let status: VaultStatus
    do {
      status = try vault.status()
    } catch let error as TaskVaultError {
      // A header edited while unlocked, a damaged file: a finding, not a crash.
      findings.append(
        .init(check: "vault", severity: .problem, message: "the vault cannot be used: \(error)", repaired: false))
      return DoctorReport(findings: findings)
    }
    switch status.lockState {
    case .locked(let reason):
      findings.append(
        .init(check: "unlock-state", severity: .ok, message: "locked (\(reason.rawValue))", repaired: false))
    case .unlocked(let until):
      let limit =
        until.map { "until \(Int64($0.timeIntervalSince1970)) (seconds since 1970)" } ?? "until reboot or lock"
      findings.append(.init(check: "unlock-state", severity: .ok, message: "unlocked \(limit)", repaired: false))
    }
    if status.kdfPreset == .fastTestOnly {
      findings.append(
        .init(
          check: "kdf", severity: .warning,
          message:
            "\(status.kdfParameters) is the fast test preset: weak against passphrase guessing; use it for tests only",
          repaired: false))
    } else {
      findings.append(
        .init(check: "kdf", severity: .ok, message: "\(status.kdfParameters), calibrated", repaired: false))
    }
    // Each store write seals once under its master key with a random nonce:
    // the generation counts the messages against the 2^32 bound (SECURITY.md §5).
    let bound: UInt64 = 1 << 32
    for (name, count) in [("synchronisable", status.generation), ("device-only", status.deviceOnlyGeneration ?? 0)] {
      let near = count >= bound / 2
      findings.append(
        .init(
          check: "key-usage", severity: near ? .warning : .ok,
          message: "the \(name) master key has sealed \(count) store write(s) of the 2^32 allowed"
            + (near ? "; make a new vault and move the items" : ""),
          repaired: false))
    }
    findings.append(
      .init(
        check: "device-only-store", severity: .ok,
        message: status.deviceOnlyGeneration.map { "present, generation \($0)" }
          ?? "absent: starts empty (restored, or no device-only item yet)",
        repaired: false))
    findings.append(registryFinding(vault, unlocked: isUnlocked(status)))
    for squatter in RuntimeDirectory.squatters() {
      findings.append(
        .init(
          check: "runtime-dir", severity: .problem,
          message: "\(squatter) takes a session-key directory's name but is not your private tmpfs directory "
            + "(another user's, a symlink or a file); taskkey routes around it, never uses it: remove it "
            + "(as root if another user owns it) or fix XDG_RUNTIME_DIR",
          repaired: false))
    }
    let registryLeftovers = AssistantKeyRegistry.legacyTemporaryFiles(in: vault.deviceOnlyDirectory)
      .map { VaultLayout.deviceOnlyDirectoryName + "/" + $0 }
    for name in VaultLayout.leftoverFiles + registryLeftovers
    where FileStatus.exists(directory + "/" + name) {
      findings.append(
        .init(
          check: "leftover-file", severity: .warning,
          message: "\(name) is left from an interrupted write; the next write removes it", repaired: false))
    }
    return DoctorReport(findings: findings)
  }

  private static func isUnlocked(_ status: VaultStatus) -> Bool {
    if case .unlocked = status.lockState { return true }
    return false
  }

  /// Opens the assistant registry and authenticates it under its integrity
  /// key (a device-only item, so the vault must be unlocked): a registry
  /// that cannot be trusted is a problem, as `verify` would refuse every
  /// key.
  static func registryFinding(_ vault: Vault, unlocked: Bool) -> DoctorFinding {
    guard unlocked else {
      return .init(
        check: "registry", severity: .ok, message: "not checked: the vault is locked (unlock, then run doctor)",
        repaired: false)
    }
    guard FileStatus.exists(vault.deviceOnlyDirectory + "/" + AssistantKeyRegistry.FileName.registry) else {
      return .init(check: "registry", severity: .ok, message: "none yet (no key minted)", repaired: false)
    }
    do {
      let keys = try AssistantKeyRegistry(vault: vault).keys()
      return .init(
        check: "registry", severity: .ok, message: "authenticated: \(keys.count) assistant key(s)", repaired: false)
    } catch {
      return .init(
        check: "registry", severity: .problem, message: "the assistant registry cannot be trusted: \(error)",
        repaired: false)
    }
  }

  /// Checks (and with `repair` fixes) the mode of the vault directory, its
  /// entries, `device-only/` and its entries.
  static func checkPermissions(_ directory: String, repair: Bool) -> [DoctorFinding] {
    var paths = [directory]
    for base in [directory, VaultLayout(directory: directory).deviceOnlyDirectory] {
      for name in ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).sorted() {
        paths.append(base + "/" + name)
      }
    }
    var findings = [DoctorFinding]()
    var loose = 0
    for path in paths {
      guard let status = try? FileStatus.of(path) else { continue }
      if status.kind == .symlink {
        findings.append(
          .init(check: "permissions", severity: .problem, message: "\(path) is a symbolic link", repaired: false))
        continue
      }
      guard status.isOwnedByUser else {
        findings.append(
          .init(check: "permissions", severity: .problem, message: "\(path) is not owned by you", repaired: false))
        continue
      }
      let mode = status.mode
      guard mode & 0o077 != 0 else { continue }
      loose += 1
      let isDirectory = status.kind == .directory
      let wanted: UInt32 = isDirectory ? 0o700 : 0o600
      var repaired = false
      if repair {
        repaired = (try? FileStatus.setMode(wanted, of: path, isDirectory: isDirectory)) != nil
      }
      findings.append(
        .init(
          check: "permissions", severity: .problem,
          message: "\(path) has mode \(String(mode, radix: 8))"
            + (repaired
              ? "; set to \(String(wanted, radix: 8))" : "; run: chmod \(String(wanted, radix: 8)) '\(path)'"),
          repaired: repaired))
    }
    if loose == 0 && findings.isEmpty {
      findings.append(
        .init(
          check: "permissions", severity: .ok, message: "every vault file and directory is private to you",
          repaired: false))
    }
    return findings
  }
}
