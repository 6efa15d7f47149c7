import TaskerCore

/// `tasker encrypt`: turn encryption on and seal every plain body.
struct EncryptCommand: Command {
  static let name = "encrypt"
  static let abstract = "Turn encryption on and seal every plain note and page body (resumable)."
  static let usage = "tasker encrypt [--batch N] [--json]"
  static let options = """
    OPTIONS:
      --batch N         Rows per transaction (default 5000, at most 100000);
                        a batch also ends at 4 MiB of bodies.
      --json            Print the report as JSON.
      -h, --help        Show this help.

    Each batch is one transaction, so the command can be interrupted at any
    point and run again: every body ends plain or sealed, never lost or
    sealed twice, and a run over a sealed database changes nothing. At the
    end the database's log is truncated so no plain copy of a sealed body
    stays in tasker.db-wal; a warning says so when another process's read
    kept it (run the command again once that process is done).
    """

  let batch: Int
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    json = try arguments.flag("--json")
    batch = try arguments.batchSize()
    _ = try arguments.positionals(exactly: [])
  }

  func run(_ context: CommandContext) throws {
    let report = try context.store(create: true).encryptBodies(batchSize: batch)
    if json { return try context.output.json(report) }
    try context.output.print(
      "Sealed \(report.sealed) bodies in \(report.batches) batches; \(report.alreadySealed) were sealed already. "
        + "Encryption is on.")
  }
}

/// `tasker rewrap`: move every sealed body to the primary key.
struct RewrapCommand: Command {
  static let name = "rewrap"
  static let abstract = "After 'taskkey rotate', reseal every body under the primary key (resumable)."
  static let usage = "tasker rewrap [--batch N] [--json]"
  static let options = """
    OPTIONS:
      --batch N         Rows per transaction (default 5000, at most 100000);
                        a batch also ends at 4 MiB of bodies.
      --json            Print the report as JSON.
      -h, --help        Show this help.

    Each batch is one transaction, so the command can be interrupted at any
    point and run again: a body under the primary key is left as it is. A
    body that does not open stops the run (exit 10-12) with its batch rolled
    back; the batches before it stay under the primary key. Then each
    sealed attachment file is re-sealed and replaced atomically, and the
    database's log is truncated so no body under the old key stays in
    tasker.db-wal. 'tasker keys' shows which key ids are still in use, and
    'taskkey retire' can remove the others.
    """

  let batch: Int
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    json = try arguments.flag("--json")
    batch = try arguments.batchSize()
    _ = try arguments.positionals(exactly: [])
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store()
    var report = try store.rewrapBodies(batchSize: batch)
    report.approvalArgumentsRewrapped = try store.rewrapApprovalArguments()
    report.attachmentsRewrapped = try store.rewrapAttachments()
    if json { return try context.output.json(report) }
    try context.output.print(
      "Rewrapped \(report.rewrapped) bodies in \(report.batches) batches and \(report.attachmentsRewrapped) "
        + "attachments to key \(report.primaryKeyID); \(report.current) bodies were under it already.")
  }
}

extension Arguments {
  /// `--batch N` of `encrypt` and `rewrap`: 5000 unless given.
  ///
  /// - Throws: a usage error for anything but 1 to `maximumEncryptionBatch`.
  mutating func batchSize() throws -> Int {
    let text = try option("--batch") ?? "5000"
    guard let batch = Int(text), (1...TaskStore.maximumEncryptionBatch).contains(batch) else {
      throw usageError("--batch must be a whole number from 1 to \(TaskStore.maximumEncryptionBatch)")
    }
    return batch
  }
}

/// `tasker keys`: the key ids the database uses.
struct KeysCommand: Command {
  static let name = "keys"
  static let abstract = "List the key ids the database uses, to check before 'taskkey retire'."
  static let usage = "tasker keys [--json] | tasker keys --values | tasker keys --check KID"
  static let options = """
    OPTIONS:
      --json            Print the counts as JSON.
      --values          Print every sealed body as a JSON line
                        {"record": …, "value": …}, for
                        'taskkey retire KID --input - --field value'.
      --check KID       Exit 0 when no body and no attachment uses key KID,
                        17 when something still does.
      -h, --help        Show this help.

    EXAMPLE:
      tasker rewrap && tasker keys --check 0a1b2c3d &&
        tasker keys --values | taskkey retire 0a1b2c3d --input - --field value
    """

  let json: Bool
  let values: Bool
  let check: String?

  init(parsing arguments: inout Arguments) throws {
    json = try arguments.flag("--json")
    values = try arguments.flag("--values")
    check = try arguments.option("--check")
    guard [json, values, check != nil].filter({ $0 }).count <= 1 else {
      throw arguments.usageError("give one of --json, --values and --check")
    }
    if let check {
      guard check.utf8.count == 8, check.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
        throw arguments.usageError("KID must be 8 lowercase hex digits, not '\(check)'")
      }
    }
    _ = try arguments.positionals(exactly: [])
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store()
    if let check {
      let report = try store.keyUsage()
      // A value this build cannot read might use the key: fail closed.
      let count =
        report.unreadable
        + (report.keys.first { $0.keyID == check }.map {
          $0.taskNotes + $0.pageBodies + $0.attachments + $0.approvalArguments
        } ?? 0)
      guard count == 0 else { throw CLIError.keyInUse(keyID: check, count: count) }
      return try context.output.print("No body or attachment uses key \(check).")
    }
    if values {
      return try store.sealedRecords { try context.output.json($0) }
    }
    let report = try store.keyUsage()
    if json { return try context.output.json(report) }
    for usage in report.keys {
      try context.output.print(
        "\(usage.keyID)  \(usage.taskNotes) notes, \(usage.pageBodies) page bodies, \(usage.attachments) attachments"
          + (usage.approvalArguments > 0 ? ", \(usage.approvalArguments) queued calls" : ""))
    }
    if report.plainBodies > 0 { try context.output.print("plain     \(report.plainBodies) bodies not sealed") }
    if report.unreadable > 0 {
      try context.output.print("unknown   \(report.unreadable) values of a format version this build cannot read")
    }
  }
}

/// `tasker settings`: show or change the encryption settings.
struct SettingsCommand: Command {
  static let name = "settings"
  static let abstract = "Show or change whether bodies (on by default) and attachments (off) are sealed."
  static let usage = "tasker settings [--json] | tasker settings set (encryption | attachment-encryption) (on | off)"
  static let options = """
    SETTINGS:
      encryption              Seal new note text and page bodies (default on).
                              'tasker encrypt' turns it on and seals old ones.
      attachment-encryption   Seal new attachment files (default off).

    Both are kept in the TaskKey vault (a device-only item for this database),
    never in the database, so showing or changing them needs the vault unlocked.

    OPTIONS:
      --json            Print the settings as JSON.
      -h, --help        Show this help.
    """

  struct Settings: Codable {
    var encryption: Bool
    var attachmentEncryption: Bool
  }

  let change: (name: String, on: Bool)?
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    json = try arguments.flag("--json")
    let words = try arguments.positionals()
    switch words.count {
    case 0: change = nil
    case 3 where words[0] == "set" && ["encryption", "attachment-encryption"].contains(words[1]):
      guard words[2] == "on" || words[2] == "off" else { throw arguments.usageError("the value must be on or off") }
      change = (words[1], words[2] == "on")
    default: throw arguments.usageError("expected 'settings' or 'settings set NAME on|off'")
    }
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store(create: change != nil)
    let current: ProtectionSettings
    if let change {
      current = try store.changeProtection {
        if change.name == "encryption" { $0.bodyEncryption = change.on } else { $0.attachmentEncryption = change.on }
      }
    } else {
      current = try store.protectionSettings()
    }
    let settings = Settings(encryption: current.bodyEncryption, attachmentEncryption: current.attachmentEncryption)
    if json { return try context.output.json(settings) }
    try context.output.print(
      "encryption             \(settings.encryption ? "on" : "off")\n"
        + "attachment-encryption  \(settings.attachmentEncryption ? "on" : "off")")
  }
}
