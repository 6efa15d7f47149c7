import CommandKit
import TaskCrypto
import TaskVault

/// `taskkey passphrase`: changes the vault passphrase.
struct PassphraseCommand: Command {
  static let spec = CommandSpec(
    name: "passphrase", abstract: "Change the vault passphrase (rewraps the master keys; no item is re-encrypted).",
    options: PassphraseSource.options + PassphraseSource.newOptions,
    json: JSONShape(fields: ["changed"], help: "{changed: true}."),
    discussion: """
      Sync bundles and backups made before keep the passphrase they were made
      under; other devices keep theirs until it is changed there too.
      """,
    example: """
      # Change it at the terminal (asked once for the old, twice for the new):
      taskkey passphrase
      """)

  let current: PassphraseSource
  let new: PassphraseSource
  let acceptWeak: Bool
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    new = try PassphraseSource(
      arguments, file: PassphraseSource.newFileOption, fd: PassphraseSource.newFDOption)
    current = try PassphraseSource(arguments)
    acceptWeak = arguments.flag(PassphraseSource.acceptWeakOption)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Report: Encodable {
    let changed: Bool
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    try current.checkAvailable()
    try new.checkAvailable()
    let old = try current.read(prompt: "Current passphrase: ")
    let replacement = try new.read(prompt: "New passphrase: ", confirm: true)
    if let reason = weakness(of: replacement) {
      guard acceptWeak else { throw CLIError.weakPassphrase(reason: reason) }
      streams.note("taskkey: warning: weak passphrase (\(reason)); accepted because of --accept-weak-passphrase")
    }
    streams.terminalNote("Checking the passphrase and rewrapping (Argon2id)...")
    try vault.changePassphrase(from: old, to: replacement)
    if json { return try streams.printJSON(Report(changed: true)) }
    try streams.print("Passphrase changed.")
  }
}
