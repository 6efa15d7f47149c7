import BackupRules
import Foundation
import TaskCrypto
import TaskSystem
import TaskVault

extension CLIError {
  /// The exit code of each backup error: 13 wrong passphrase, 15 damaged
  /// or altered, 12 unsupported version, 74 target not empty or output
  /// exists (as `init` over an existing vault), and the vault's own codes.
  static func exitCode(for error: BackupError) -> ExitCode {
    switch error {
    case .damaged, .tampered: return .tampered
    case .unsupportedVersion: return .unsupportedVersion
    case .targetNotEmpty, .outputExists: return .ioError
    case .system(let system): return system.isRefusal ? .permission : .ioError
    case .vault(let vault): return exitCode(for: vault)
    }
  }
}

/// Runs a backup call, mapping its errors into the CLI's.
func backupCall<T>(_ body: () throws -> T) throws -> T {
  do {
    return try body()
  } catch let error as BackupError {
    throw CLIError.backup(error)
  } catch let error as TaskVaultError {
    throw CLIError.vault(error)
  }
}

/// `taskkey backup create|restore`: TaskKey's own backup file.
struct BackupCommand: Command {
  static let name = "backup"
  static let abstract = "Write or restore an encrypted backup (never device-only items or assistant keys)."
  static let usage =
    "taskkey backup create --out F | restore F [--force] [--json] [--passphrase-file F | --passphrase-fd N]"
  static let options = """
    SUBCOMMANDS:
      create            Write the synchronisable store (note keys and items
                        without --device-only) to a new 0600 file, sealed as
                        in the vault and authenticated. Needs an unlocked
                        vault. Device-only items, assistant keys and their
                        registry never go in.
      restore F         Restore backup F into TASKKEY_HOME, which must be
                        empty or missing. The device-only store and the
                        assistant registry start empty: every assistant
                        needs a new key. The vault is left locked.

    OPTIONS:
      --out F           (create) The new backup file; never overwritten.
      --force           (restore) Move a non-empty TASKKEY_HOME aside to
                        '<dir>.before-restore-<time>' first (kept, never
                        deleted).
      --json            (restore) Print the report as JSON.
    \(PassphraseSource.help)
      -h, --help        Show this help.
    """
  static let example = """
      # Make a backup, then restore it on a new machine:
      taskkey backup create --out ~/tasker-keys.tkbackup
      TASKKEY_HOME=~/.local/share/tasker/keys taskkey backup restore ~/tasker-keys.tkbackup
    """

  enum Action {
    case create(out: String)
    case restore(path: String, force: Bool)
  }

  let action: Action
  let json: Bool
  let passphrase: PassphraseSource

  init(parsing arguments: inout Arguments) throws {
    let out = try arguments.option("--out")
    let force = try arguments.flag("--force")
    json = try arguments.flag("--json")
    passphrase = try PassphraseSource(parsing: &arguments)
    let words = try arguments.positionals()
    switch (words.first, words.count, out) {
    case ("create", 1, let out?): action = .create(out: out)
    case ("create", 1, nil): throw arguments.usageError("'backup create' needs --out F")
    case ("restore", 2, nil): action = .restore(path: words[1], force: force)
    default: throw arguments.usageError("expected 'backup create --out F' or 'backup restore F'")
    }
  }

  struct Report: Encodable {
    let directory: String
    let vaultID: String
    let generation: UInt64
    let noteKeyCount: Int
    let items: [String]
    let movedAsideTo: String?
    let deviceOnlyItems: String
    let assistantKeys: String
    let state: String
  }

  func run(_ streams: StandardStreams) throws {
    switch action {
    case .create(let out):
      let vault = try openVault(streams)
      if out == standardStreamPath {
        try refuseBinaryOnTerminal("a backup")
        let made = try backupCall { try BackupRules.backup(vault) }
        try streams.writeOutput(made.bytes)
        return
      }
      let summary = try backupCall { try BackupRules.backup(vault, to: out) }
      try streams.print(
        "Wrote the backup of vault \(summary.vaultID) to \(out): \(summary.noteKeyCount) note key(s), "
          + "\(summary.itemNames.count) synchronisable item(s). Device-only items and assistant keys are not in it.")
    case .restore(let path, let force):
      let directory = try vaultDirectory(streams)
      let secret = try passphrase.read(prompt: "Passphrase of the backed-up vault: ")
      // Opening the backup runs the vault's KDF (about half a second): say
      // so on a terminal, stay quiet when standard error is piped.
      if FileDescriptor.standardError.isTerminal {
        streams.printError("Checking the passphrase and restoring (Argon2id)...")
      }
      let report = try backupCall {
        guard path == standardStreamPath else {
          return try BackupRules.restore(from: path, into: directory, passphrase: secret, force: force)
        }
        let bytes = try streams.readInput(BackupRules.maximumBackupByteCount)
        return try BackupRules.restore(
          bytes, named: "<stdin>", into: directory, passphrase: secret, force: force)
      }
      if json {
        try streams.print(
          try jsonText(
            Report(
              directory: report.directory, vaultID: report.backup.vaultID, generation: report.backup.generation,
              noteKeyCount: report.backup.noteKeyCount, items: report.backup.itemNames,
              movedAsideTo: report.movedAsideTo, deviceOnlyItems: "absent",
              assistantKeys: "registry empty: every assistant needs a new key", state: "locked")))
      } else {
        for line in report.lines { try streams.print(line) }
      }
    }
  }
}

/// `taskkey doctor`: permissions, exclusion markers, unlock state, KDF.
struct DoctorCommand: Command {
  static let name = "doctor"
  static let abstract = "Check (and repair) permissions and backup-exclusion markers; show unlock state and KDF."
  static let usage = "taskkey doctor [--repair] [--json]"
  static let options = """
    OPTIONS:
      --repair          Tighten loose modes (0700 directories, 0600 files)
                        and re-create missing exclusion markers of
                        device-only/ (CACHEDIR.TAG, .nobackup,
                        user.xdg.robots.backup=false).
      --json            One JSON object: healthy (bool) and findings, each
                        {check, severity ("ok", "warning", "problem"),
                        message, repaired}.
      -h, --help        Show this help.

    Exits 0 when no problem is left, 18 when one is.
    """
  static let example = """
      # After copying the vault by hand, put the markers back:
      taskkey doctor --repair
    """

  let repair: Bool
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    repair = try arguments.flag("--repair")
    json = try arguments.flag("--json")
    try arguments.finish()
  }

  struct Output: Encodable {
    struct Finding: Encodable {
      let check: String
      let severity: String
      let message: String
      let repaired: Bool
    }
    let healthy: Bool
    let findings: [Finding]
  }

  /// The exit code after printing the report.
  func exitCode(_ streams: StandardStreams) throws -> ExitCode {
    let directory = try vaultDirectory(streams)
    let report = try backupCall { try BackupRules.doctor(directory: directory, repair: repair) }
    if json {
      try streams.print(
        try jsonText(
          Output(
            healthy: report.healthy,
            findings: report.findings.map {
              .init(check: $0.check, severity: $0.severity.rawValue, message: $0.message, repaired: $0.repaired)
            })))
    } else {
      for finding in report.findings {
        let mark = finding.repaired ? "fixed" : finding.severity.rawValue
        try streams.print(
          "\(mark.padding(toLength: 8, withPad: " ", startingAt: 0))\(finding.check): \(finding.message)")
      }
    }
    return report.healthy ? .success : .doctorProblems
  }

  func run(_ streams: StandardStreams) throws {
    let code = try exitCode(streams)
    if code != .success { throw DoctorUnhealthy() }
  }
}

/// Thrown by `doctor` after printing its report, to exit 18 quietly.
struct DoctorUnhealthy: Error {}
