import TaskCrypto
import TaskVault

/// `taskkey passphrase`: changes the vault passphrase.
struct PassphraseCommand: Command {
  static let name = "passphrase"
  static let abstract = "Change the vault passphrase (rewraps the master keys; no item is re-encrypted)."
  static let usage =
    "taskkey passphrase [--passphrase-file F | --passphrase-fd N] [--new-passphrase-file F | --new-passphrase-fd N]"
  static let options = """
    OPTIONS:
    \(PassphraseSource.help)
    \(PassphraseSource.newHelp)
      -h, --help        Show this help.
    """
  static let example = """
      # Change it at the terminal (asked once for the old, twice for the new):
      taskkey passphrase
    """

  let current: PassphraseSource
  let new: PassphraseSource

  init(parsing arguments: inout Arguments) throws {
    new = try PassphraseSource(parsing: &arguments, prefix: "new-")
    current = try PassphraseSource(parsing: &arguments)
    try arguments.finish()
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    let old = try current.read(prompt: "Current passphrase: ")
    let replacement = try new.read(prompt: "New passphrase: ", confirm: true)
    try vaultCall { try vault.changePassphrase(from: old, to: replacement) }
    try streams.print("Passphrase changed.")
  }
}
