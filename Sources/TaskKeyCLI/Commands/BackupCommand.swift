import BackupRules
import CommandKit
import TaskCrypto
import TaskVault

/// `taskkey backup create|restore`: TaskKey's own backup file.
struct BackupCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "backup", abstract: "Write or restore an encrypted backup (never device-only items or assistant keys).",
    example: """
      # Make a backup, then restore it on a new machine:
      taskkey backup create -o ~/tasker-keys.tkbackup
      taskkey backup restore ~/tasker-keys.tkbackup
      """)
  static let subcommands: [any CommandDeclaration.Type] = [BackupCreateCommand.self, BackupRestoreCommand.self]
}

/// `taskkey backup create -o F`.
struct BackupCreateCommand: Command {
  static let outOption = OptionSpec.value(
    "--out", short: "o", "F", .file, help: "The new backup file, never overwritten; '-' is standard output.",
    required: true)

  static let spec = CommandSpec(
    name: "create",
    abstract: "Write the synchronisable store (note keys, items without --device-only) to a new 0600 file.",
    options: [outOption],
    json: JSONShape(
      fields: ["path", "vault_id", "note_key_count", "items"], help: "{path, vault_id, note_key_count, items}."),
    discussion: """
      Sealed as in the vault and authenticated. Needs an unlocked vault. Device-only
      items, assistant keys and their registry never go in.
      """,
    example: """
      taskkey backup create -o ~/tasker-keys.tkbackup
      """)

  let out: String
  let json: Bool

  init(_ arguments: ParsedArguments) {
    out = arguments.value(Self.outOption)!
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Report: Encodable {
    let path: String
    let vaultId: String
    let noteKeyCount: Int
    let items: [String]
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    if out == standardStreamPath {
      if streams.outputIsTerminal { throw CLIError.binaryToTerminal(what: "a backup") }
      return try streams.write(try BackupRules.backup(vault).bytes)
    }
    if ProcessIO.exists(out) { throw BackupError.outputExists(path: out) }
    let summary = try BackupRules.backup(vault, to: out)
    if json {
      return try streams.printJSON(
        Report(path: out, vaultId: summary.vaultID, noteKeyCount: summary.noteKeyCount, items: summary.itemNames))
    }
    try streams.print(
      "Wrote the backup of vault \(summary.vaultID) to \(out): \(summary.noteKeyCount) note key(s), "
        + "\(summary.itemNames.count) synchronisable item(s). Device-only items and assistant keys are not in it.")
  }
}

/// `taskkey backup restore F`.
struct BackupRestoreCommand: Command {
  static let forceOption = OptionSpec.flag(
    "--force",
    help: "Move a non-empty TASKKEY_HOME aside to '<dir>.before-restore-<time>' first (kept, never deleted).")

  static let spec = CommandSpec(
    name: "restore", abstract: "Restore a backup into TASKKEY_HOME, which must be empty or missing.",
    arguments: [
      ArgumentSpec(name: "F", kind: .file, help: "The backup file 'backup create' wrote ('-': standard input).")
    ],
    options: [forceOption] + PassphraseSource.options,
    json: JSONShape(
      fields: [
        "directory", "vault_id", "generation", "note_key_count", "items", "moved_aside_to", "device_only_items",
        "assistant_keys", "state",
      ],
      help: "{directory, vault_id, generation, note_key_count, items, moved_aside_to, device_only_items, "
        + "assistant_keys, state}."),
    discussion: """
      The passphrase is the vault passphrase that was current when the backup was
      made. The device-only store and the assistant registry start empty: every
      assistant needs a new key. The vault is left locked.
      """,
    example: """
      TASKKEY_HOME=~/.local/share/tasker/keys taskkey backup restore ~/tasker-keys.tkbackup
      """)

  let path: String
  let force: Bool
  let passphrase: PassphraseSource
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    path = arguments.argument(0)!
    force = arguments.flag(Self.forceOption)
    passphrase = try PassphraseSource(arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Report: Encodable {
    let directory: String
    let vaultId: String
    let generation: UInt64
    let noteKeyCount: Int
    let items: [String]
    let movedAsideTo: String?
    let deviceOnlyItems: String
    let assistantKeys: String
    let state: String
  }

  func run(_ streams: StandardStreams) throws {
    let directory = try vaultDirectory(streams)
    // Cheap checks before the prompt and the KDF.
    guard path == standardStreamPath || ProcessIO.exists(path) else {
      throw CLIError.cannotOpen(path: path, reason: "no such file")
    }
    if !force && ProcessIO.exists(VaultLayout(directory: directory).vaultFile) {
      throw BackupError.targetNotEmpty(path: directory)
    }
    try passphrase.checkAvailable()
    let secret = try passphrase.read(prompt: "Passphrase of the backed-up vault: ")
    streams.terminalNote("Checking the passphrase and restoring (Argon2id)...")
    let report: RestoreReport
    if path == standardStreamPath {
      let bytes = try streams.readAll(limit: BackupRules.maximumBackupByteCount)
      report = try BackupRules.restore(bytes, named: "<stdin>", into: directory, passphrase: secret, force: force)
    } else {
      report = try BackupRules.restore(from: path, into: directory, passphrase: secret, force: force)
    }
    if json {
      return try streams.printJSON(
        Report(
          directory: report.directory, vaultId: report.backup.vaultID, generation: report.backup.generation,
          noteKeyCount: report.backup.noteKeyCount, items: report.backup.itemNames, movedAsideTo: report.movedAsideTo,
          deviceOnlyItems: "absent", assistantKeys: "registry empty: every assistant needs a new key", state: "locked"))
    }
    for line in report.lines { try streams.print(line) }
  }
}
