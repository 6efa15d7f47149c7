import CommandKit
import TaskerCore

/// `--batch N` of `encrypt` and `rewrap`.
enum BatchOption {
  static let option = OptionSpec.value(
    "--batch", "N", .recordID,
    help: "Rows per transaction (default 5000, at most \(TaskStore.maximumEncryptionBatch)); a batch also ends at "
      + "4 MiB of bodies.")

  /// The batch size: 5000 unless given.
  ///
  /// - Throws: a usage error above `maximumEncryptionBatch`.
  static func size(_ arguments: ParsedArguments) throws -> Int {
    let batch = arguments.recordID(option).map { Int($0) } ?? 5000
    guard batch <= TaskStore.maximumEncryptionBatch else {
      throw arguments.usageError("--batch must be a whole number from 1 to \(TaskStore.maximumEncryptionBatch)")
    }
    return batch
  }
}

/// `tasker encrypt`: turn encryption on and seal every plain body.
struct EncryptCommand: Command {
  static let spec = CommandSpec(
    name: "encrypt", abstract: "Turn encryption on and seal every plain note and page body (resumable).",
    options: [BatchOption.option],
    json: JSONShape(
      fields: ["sealed", "already_sealed", "empty", "batches", "log_truncated"], help: "what was sealed."),
    discussion: "Each batch is one transaction, so the command can be interrupted at any point and run again: every "
      + "body ends plain or sealed, never lost or sealed twice, and a run over a sealed database changes nothing. At "
      + "the end the database's log is truncated so no plain copy of a sealed body stays in tasker.db-wal; a warning "
      + "says so when another process's read kept it (run the command again once that process is done).",
    example: "tasker encrypt --json")

  let batch: Int
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
    batch = try BatchOption.size(arguments)
  }

  func run(_ context: CommandContext) throws {
    let report = try context.store(create: true).encryptBodies(batchSize: batch)
    if json { return try context.streams.printJSON(report) }
    try context.print(
      "Sealed \(report.sealed) bodies in \(report.batches) batches; \(report.alreadySealed) were sealed already. "
        + "Encryption is on.")
  }
}

/// `tasker rewrap`: move every sealed body to the primary key.
struct RewrapCommand: Command {
  static let spec = CommandSpec(
    name: "rewrap", abstract: "After 'taskkey rotate', reseal every body under the primary key (resumable).",
    options: [BatchOption.option],
    json: JSONShape(
      fields: [
        "rewrapped", "current", "plain", "batches", "primary_key_id", "approval_arguments_rewrapped",
        "attachments_rewrapped", "log_truncated",
      ], help: "what was resealed and under which key."),
    discussion: "Each batch is one transaction, so the command can be interrupted at any point and run again: a body "
      + "under the primary key is left as it is. A body that does not open stops the run (exit 10-12) with its batch "
      + "rolled back; the batches before it stay under the primary key. Then each sealed attachment file is "
      + "re-sealed and replaced atomically, and the database's log is truncated so no body under the old key stays "
      + "in tasker.db-wal. 'tasker keys' shows which key ids are still in use, and 'taskkey retire' can remove the "
      + "others.",
    example: "tasker rewrap && tasker keys")

  let batch: Int
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
    batch = try BatchOption.size(arguments)
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store()
    var report = try store.rewrapBodies(batchSize: batch)
    report.approvalArgumentsRewrapped = try store.rewrapApprovalArguments()
    report.attachmentsRewrapped = try store.rewrapAttachments()
    if json { return try context.streams.printJSON(report) }
    try context.print(
      "Rewrapped \(report.rewrapped) bodies in \(report.batches) batches and \(report.attachmentsRewrapped) "
        + "attachments to key \(report.primaryKeyID); \(report.current) bodies were under it already.")
  }
}

/// `tasker keys`: the key ids the database uses.
struct KeysCommand: Command {
  static let values = OptionSpec.flag(
    "--values",
    help: "Print every sealed body as a JSON line {\"record\": …, \"value\": …}, for "
      + "'taskkey retire KID --input - --field value'.")
  static let check = OptionSpec.value(
    "--check", "KID", .text, help: "Exit 0 when no body and no attachment uses key KID, 17 when something still does.")
  static let spec = CommandSpec(
    name: "keys", abstract: "List the key ids the database uses, to check before 'taskkey retire'.",
    options: [values, check],
    json: JSONShape(fields: ["keys", "plain_bodies", "unreadable"], help: "the counts per key id."),
    example: """
      tasker rewrap && tasker keys --check 0a1b2c3d &&
        tasker keys --values | taskkey retire 0a1b2c3d --input - --field value
      """)

  let json: Bool
  let listValues: Bool
  let checked: String?

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
    listValues = arguments.flag(Self.values)
    checked = arguments.value(Self.check)
    guard [json, listValues, checked != nil].filter({ $0 }).count <= 1 else {
      throw arguments.usageError("give one of --json, --values and --check")
    }
    if let checked {
      guard checked.utf8.count == 8, checked.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
      else {
        throw arguments.usageError("KID must be 8 lowercase hex digits, not '\(checked)'")
      }
    }
  }

  func run(_ context: CommandContext) throws {
    let store = try context.store()
    if let check = checked {
      let report = try store.keyUsage()
      // A value this build cannot read might use the key: fail closed.
      let count =
        report.unreadable
        + (report.keys.first { $0.keyID == check }.map {
          $0.taskNotes + $0.pageBodies + $0.attachments + $0.approvalArguments
        } ?? 0)
      guard count == 0 else { throw CLIError.keyInUse(keyID: check, count: count) }
      return try context.print("No body or attachment uses key \(check).")
    }
    if listValues {
      return try store.sealedRecords { try context.streams.printJSON($0) }
    }
    let report = try store.keyUsage()
    if json { return try context.streams.printJSON(report) }
    for usage in report.keys {
      try context.print(
        "\(usage.keyID)  \(usage.taskNotes) notes, \(usage.pageBodies) page bodies, \(usage.attachments) attachments"
          + (usage.approvalArguments > 0 ? ", \(usage.approvalArguments) queued calls" : ""))
    }
    if report.plainBodies > 0 { try context.print("plain     \(report.plainBodies) bodies not sealed") }
    if report.unreadable > 0 {
      try context.print("unknown   \(report.unreadable) values of a format version this build cannot read")
    }
  }
}

/// `tasker settings [set NAME on|off]`: show or change the encryption
/// settings.
struct SettingsCommand: Command {
  static let names = ["encryption", "attachment-encryption"]
  static let spec = CommandSpec(
    name: "settings", abstract: "Show or change whether bodies (on by default) and attachments (off) are sealed.",
    arguments: [
      ArgumentSpec(name: "set", kind: .choice(["set"]), help: "Change a setting.", optional: true),
      ArgumentSpec(
        name: "NAME", kind: .choice(names),
        help: "encryption: seal new note text and page bodies (default on; 'tasker encrypt' seals old ones). "
          + "attachment-encryption: seal new attachment files (default off).", optional: true),
      ArgumentSpec(name: "VALUE", kind: .choice(["on", "off"]), help: "on or off.", optional: true),
    ],
    json: JSONShape(fields: ["encryption", "attachment_encryption"], help: "both settings, true or false."),
    discussion: "Both are kept in the TaskKey vault (a device-only item for this database), never in the database, "
      + "so showing or changing them needs the vault unlocked.",
    example: """
      tasker settings
      tasker settings set attachment-encryption on
      """)

  struct Settings: Encodable {
    var encryption: Bool
    var attachmentEncryption: Bool
  }

  let change: (name: String, on: Bool)?
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
    switch arguments.positionals.count {
    case 0: change = nil
    case 3: change = (arguments.positionals[1], arguments.positionals[2] == "on")
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
    if json { return try context.streams.printJSON(settings) }
    try context.print(
      "encryption             \(settings.encryption ? "on" : "off")\n"
        + "attachment-encryption  \(settings.attachmentEncryption ? "on" : "off")")
  }
}
