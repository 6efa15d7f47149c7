import CommandKit
import TaskCrypto
import TaskVault

/// `taskkey init`: makes a new vault with a fresh note keyring, or joins
/// another device's vault from its sync bundle, and leaves it unlocked.
struct InitCommand: Command {
  static let kdfOption = OptionSpec.value(
    "--kdf", "P", .choice(["calibrated", "fast-test-only"]),
    help: "'calibrated' (default): Argon2id tuned on this machine to about 0.5 s, at least 64 MiB and 3 passes. "
      + "'fast-test-only': 1 pass over 8 MiB, for tests; status warns about it. Never use it for real secrets.")
  static let fromBundleOption = OptionSpec.value(
    "--from-bundle", "F", .file,
    help: "Join the vault of another device: F is the sync bundle it exported. This vault is made with the "
      + "passphrase of that vault (asked as \"Passphrase of the vault that exported the bundle\"), takes its "
      + "note keys and primary key, and its items.")
  static let lockedOption = OptionSpec.flag("--locked", help: "Leave the new vault locked.")

  static let spec = CommandSpec(
    name: "init", abstract: "Make a new passphrase-guarded vault (or join another device's) and unlock it.",
    options: [kdfOption, fromBundleOption, lockedOption] + PassphraseSource.options + [
      PassphraseSource.acceptWeakOption
    ],
    json: JSONShape(
      fields: ["directory", "vault_id", "kdf", "state", "joined_from", "primary_key_id"],
      help: "{directory, vault_id, kdf, state (\"unlocked\" or \"locked\"), joined_from (the bundle, or null), "
        + "primary_key_id}."),
    discussion: """
      The passphrase is asked twice on a terminal; the one just proven unlocks the
      vault, until reboot or 'taskkey lock'. Cheap checks (an existing vault, an
      empty or weak passphrase, a bundle file that cannot be read) run before the
      KDF is calibrated.
      """,
    example: """
      # Make the vault in the default place ($TASKKEY_HOME or ~/.local/share/tasker/keys):
      taskkey init
      # On a second device, join the first one's vault from its sync bundle:
      taskkey init --from-bundle ~/Sync/tasker-keys.tksync
      """)

  let preset: KDFPreset
  let bundle: String?
  let leaveLocked: Bool
  let acceptWeak: Bool
  let passphrase: PassphraseSource
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    preset = arguments.value(Self.kdfOption) == "fast-test-only" ? .fastTestOnly : .calibrated
    bundle = arguments.value(Self.fromBundleOption)
    leaveLocked = arguments.flag(Self.lockedOption)
    acceptWeak = arguments.flag(PassphraseSource.acceptWeakOption)
    passphrase = try PassphraseSource(arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Report: Encodable {
    let directory: String
    let vaultId: String
    let kdf: String
    let state: String
    let joinedFrom: String?
    let primaryKeyId: String
  }

  func run(_ streams: StandardStreams) throws {
    let directory = try vaultDirectory(streams)
    // Cheap checks first: an existing vault, an unreadable bundle, no terminal.
    if ProcessIO.exists(VaultLayout(directory: directory).vaultFile) {
      throw TaskVaultError.alreadyInitialised(path: directory)
    }
    let bundleBytes = try bundle.map { try ProcessIO.readFile($0, limit: SyncCommand.bundleByteLimit) }
    try passphrase.checkAvailable()
    let prompt = bundle == nil ? "New vault passphrase: " : "Passphrase of the vault that exported the bundle: "
    let secret = try passphrase.read(prompt: prompt, confirm: bundle == nil)
    if bundle == nil, let reason = weakness(of: secret) {
      guard acceptWeak else { throw CLIError.weakPassphrase(reason: reason) }
      streams.note("taskkey: warning: weak passphrase (\(reason)); accepted because of --accept-weak-passphrase")
    }
    if let bundleBytes {
      // Prove the passphrase on the bundle before anything is written.
      streams.terminalNote("Checking the passphrase on the bundle (Argon2id)...")
      _ = try withBundlePassphrase { try Vault.checkSyncBundle(bundleBytes, passphrase: secret) }
    }
    if preset == .calibrated { streams.terminalNote("Calibrating the passphrase KDF (about a second)...") }
    let vault = try Vault.create(at: directory, passphrase: secret, preset: preset)
    if !leaveLocked || bundleBytes != nil {
      streams.terminalNote("Unlocking with the passphrase just set...")
      try vault.unlock(passphrase: secret)
    }
    if let bundleBytes {
      // The bundle's keys and primary become this vault's: both devices
      // then seal under the same primary key.
      let report = try vault.importSyncBundle(bundleBytes, passphrase: secret, primary: .adopt)
      try vault.updateNoteKeyring { keyring in
        for id in keyring.ids where !report.addedKeyIDs.contains(id) && !report.unchangedKeyIDs.contains(id) {
          try keyring.retire(id)
        }
      }
      if leaveLocked { try vault.lock() }
    }
    let status = try vault.status()
    let primary = try leaveLocked ? nil : vault.noteKeyring().primaryID.hex
    let state = leaveLocked ? "locked" : "unlocked"
    if json {
      return try streams.printJSON(
        Report(
          directory: directory, vaultId: status.vaultID, kdf: "\(status.kdfParameters), \(status.kdfPreset.rawName)",
          state: state, joinedFrom: bundle, primaryKeyId: primary ?? ""))
    }
    try streams.print(
      bundle.map { "Joined the vault of bundle \($0) at \(directory)" } ?? "Created the vault at \(directory)")
    try streams.print("KDF: \(status.kdfParameters), \(status.kdfPreset.rawName)")
    if let primary { try streams.print("Primary note key: \(primary)") }
    try streams.print(
      leaveLocked ? "It is locked; run 'taskkey unlock' to use it." : "It is unlocked until reboot or 'taskkey lock'.")
  }
}
