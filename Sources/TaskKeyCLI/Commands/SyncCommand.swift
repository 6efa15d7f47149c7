import CommandKit
import TaskCrypto
import TaskVault

/// `taskkey sync export|import`: moves the synchronisable store between
/// devices as an end-to-end encrypted bundle.
struct SyncCommand: Command, CommandGroup {
  /// The largest bundle read: a valid one is a little over 8 MiB at most.
  static let bundleByteLimit = 9 << 20

  static let spec = CommandSpec(
    name: "sync", abstract: "Export or import the synchronisable store (note keys) as an encrypted bundle.",
    discussion: """
      A second device joins with 'taskkey init --from-bundle F' (README, "Two
      devices"). After that, each device exports after it rotates and imports what
      the other exported; an import adopts the bundle's primary key when that key
      is new here, so both devices end up sealing under the newest primary.
      """,
    example: """
      # On the laptop, then on the desktop:
      taskkey sync export -o ~/Sync/tasker-keys.tksync
      taskkey sync import ~/Sync/tasker-keys.tksync
      """)
  static let subcommands: [any CommandDeclaration.Type] = [SyncExportCommand.self, SyncImportCommand.self]
}

/// `taskkey sync export`.
struct SyncExportCommand: Command {
  static let outOption = OptionSpec.value(
    "--out", short: "o", "F", .file, help: "Write to a new 0600 file F ('-' or none: standard output).")

  static let spec = CommandSpec(
    name: "export",
    abstract: "Write a sync bundle of the note keyring and synchronisable items; device-only items never go in.",
    options: [outOption] + PassphraseSource.options,
    json: JSONShape(fields: ["path", "byte_count"], help: "{path, byte_count} (with --out only)."),
    discussion: """
      The vault passphrase is asked even when the vault is unlocked, because the
      format needs it: the bundle is sealed under a key that Argon2id derives from
      the passphrase with a fresh salt, so that the other device, which knows only
      the passphrase, can open it. An unlocked vault holds its master keys, never
      the passphrase or anything derived from it. Refusals that need no passphrase
      (an existing --out file, binary output to a terminal, no terminal to ask)
      come before the prompt and the KDF.
      """,
    example: """
      taskkey sync export -o ~/Sync/tasker-keys.tksync
      """)

  let out: String?
  let passphrase: PassphraseSource
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    out = arguments.value(Self.outOption).flatMap { $0 == standardStreamPath ? nil : $0 }
    passphrase = try PassphraseSource(arguments)
    json = arguments.flag(CommandSpec.jsonOption)
    if json && out == nil { throw arguments.usageError("--json needs --out F (the bundle itself goes to stdout)") }
  }

  struct Report: Encodable {
    let path: String
    let byteCount: Int
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    // Cheap refusals before the prompt and the KDF.
    if let out, ProcessIO.exists(out) { throw CLIError.fileExists(path: out) }
    if out == nil && streams.outputIsTerminal { throw CLIError.binaryToTerminal(what: "a binary sync bundle") }
    try passphrase.checkAvailable()
    let secret = try passphrase.read(prompt: "Vault passphrase (the bundle is sealed under it): ")
    streams.terminalNote("Deriving the bundle key (Argon2id)...")
    let bundle = try vault.exportSyncBundle(passphrase: secret)
    guard let out else { return try streams.write(bundle) }
    try bundle.withUnsafeBytes { try ProcessIO.createNewFile(out, $0) }
    if json { return try streams.printJSON(Report(path: out, byteCount: bundle.count)) }
    try streams.print("Wrote the sync bundle to \(out).")
  }
}

/// `taskkey sync import F`.
struct SyncImportCommand: Command {
  static let keepPrimaryOption = OptionSpec.flag(
    "--keep-primary", help: "Keep this vault's primary key even when the bundle's primary is new here.")
  static let adoptPrimaryOption = OptionSpec.flag(
    "--adopt-primary", help: "Make the bundle's primary key the primary here even when it was known already.")

  static let spec = CommandSpec(
    name: "import",
    abstract: "Merge a bundle: keys by key id (none is ever dropped), items by name (the later change wins).",
    arguments: [
      ArgumentSpec(name: "F", kind: .file, help: "The bundle another device exported ('-': standard input).")
    ],
    options: [keepPrimaryOption, adoptPrimaryOption] + PassphraseSource.options,
    json: JSONShape(
      fields: [
        "added_keys", "unchanged_keys", "retired_keys", "refused_retired_keys", "previous_primary", "primary",
        "added_items", "updated_items", "kept_items", "skipped_items",
      ],
      help: "{added_keys, unchanged_keys, retired_keys (retired on the other device), refused_retired_keys (retired "
        + "here, not added back), previous_primary, primary, added_items, updated_items, kept_items, skipped_items "
        + "(device-only here)}."),
    discussion: """
      The passphrase asked is the one of the vault that exported the bundle
      (the same as this vault's when this device joined with init --from-bundle).
      """,
    example: """
      taskkey sync import ~/Sync/tasker-keys.tksync
      """)

  let path: String
  let keepPrimary: Bool
  let adoptPrimary: Bool
  let passphrase: PassphraseSource
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    path = arguments.argument(0)!
    keepPrimary = arguments.flag(Self.keepPrimaryOption)
    adoptPrimary = arguments.flag(Self.adoptPrimaryOption)
    if keepPrimary && adoptPrimary { throw arguments.usageError("give --keep-primary or --adopt-primary, not both") }
    passphrase = try PassphraseSource(arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Report: Encodable {
    let addedKeys: [String]
    let unchangedKeys: [String]
    let retiredKeys: [String]
    let refusedRetiredKeys: [String]
    let previousPrimary: String
    let primary: String
    let addedItems: [String]
    let updatedItems: [String]
    let keptItems: [String]
    let skippedItems: [String]
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    let bundle =
      path == standardStreamPath
      ? try streams.readAll(limit: SyncCommand.bundleByteLimit)
      : try ProcessIO.readFile(path, limit: SyncCommand.bundleByteLimit)
    // Say "locked" before asking for a passphrase that could not be used.
    if case .locked(let reason) = try vault.status().lockState { throw TaskVaultError.locked(reason: reason) }
    try passphrase.checkAvailable()
    let secret = try passphrase.read(prompt: "Passphrase of the vault that exported the bundle: ")
    streams.terminalNote("Checking the bundle (Argon2id)...")
    let choice: SyncPrimaryChoice = adoptPrimary ? .adopt : keepPrimary ? .keep : .automatic
    let report = try withBundlePassphrase { try vault.importSyncBundle(bundle, passphrase: secret, primary: choice) }
    let output = Report(
      addedKeys: report.addedKeyIDs.map(\.hex), unchangedKeys: report.unchangedKeyIDs.map(\.hex),
      retiredKeys: report.retiredKeyIDs.map(\.hex), refusedRetiredKeys: report.refusedRetiredKeyIDs.map(\.hex),
      previousPrimary: report.previousPrimaryID.hex, primary: report.primaryID.hex, addedItems: report.addedItems,
      updatedItems: report.updatedItems, keptItems: report.keptItems, skippedItems: report.skippedItems)
    if json { return try streams.printJSON(output) }
    try streams.print("Keys added: \(output.addedKeys.isEmpty ? "none" : output.addedKeys.joined(separator: " "))")
    try streams.print("Keys already here: \(output.unchangedKeys.count)")
    try streams.print(
      "Keys retired (retired on the other device): "
        + (output.retiredKeys.isEmpty ? "none" : output.retiredKeys.joined(separator: " ")))
    if !output.refusedRetiredKeys.isEmpty {
      try streams.print("Retired keys not added back: \(output.refusedRetiredKeys.joined(separator: " "))")
    }
    let changed = report.primaryID == report.previousPrimaryID ? " (unchanged)" : " (changed: the bundle's is newer)"
    try streams.print("Primary: \(output.primary)\(changed)")
    try streams.print(
      "Items added: \(output.addedItems.count), updated: \(output.updatedItems.count), kept: "
        + "\(output.keptItems.count), skipped (device-only here): \(output.skippedItems.count)")
  }
}

/// Runs `body`, which opens a sync bundle with a passphrase, reporting a
/// wrong passphrase as the bundle's (whose passphrase it takes, in the hint).
///
/// - Throws: `CLIError.wrongBundlePassphrase`, or what `body` throws.
func withBundlePassphrase<T>(_ body: () throws -> T) throws -> T {
  do {
    return try body()
  } catch TaskVaultError.wrongPassphrase {
    throw CLIError.wrongBundlePassphrase
  }
}
