import TaskCrypto
import TaskSystem
import TaskVault

/// `taskkey init`: makes a new vault with a fresh note keyring.
struct InitCommand: Command {
  static let name = "init"
  static let abstract = "Make a new passphrase-guarded vault with a fresh note key."
  static let usage = "taskkey init [--kdf calibrated|fast-test-only] [--passphrase-file F | --passphrase-fd N]"
  static let options = """
    OPTIONS:
      --kdf P           'calibrated' (default): Argon2id tuned on this machine to
                        about 0.5 s, at least 64 MiB and 3 passes.
                        'fast-test-only': 1 pass over 8 MiB, for tests; status
                        warns about it. Never use it for real secrets.
    \(PassphraseSource.help)
      -h, --help        Show this help.
    """
  static let example = """
      # Make the vault in the default place ($TASKKEY_HOME or ~/.local/share/tasker/keys):
      taskkey init
    """

  let preset: KDFPreset
  let passphrase: PassphraseSource

  init(parsing arguments: inout Arguments) throws {
    switch try arguments.option("--kdf") {
    case nil, "calibrated": preset = .calibrated
    case "fast-test-only": preset = .fastTestOnly
    case let other?: throw arguments.usageError("unknown --kdf '\(other)'; use calibrated or fast-test-only")
    }
    passphrase = try PassphraseSource(parsing: &arguments)
    try arguments.finish()
  }

  func run(_ streams: StandardStreams) throws {
    let directory = try vaultDirectory(streams)
    let secret = try passphrase.read(prompt: "New vault passphrase: ", confirm: true)
    if preset == .calibrated && FileDescriptor.standardError.isTerminal {
      streams.printError("Calibrating the passphrase KDF (about a second)...")
    }
    let vault = try vaultCall { try Vault.create(at: directory, passphrase: secret, preset: preset) }
    let status = try vaultCall { try vault.status() }
    try streams.print("Created the vault at \(directory)")
    try streams.print("KDF: \(status.kdfParameters), \(status.kdfPreset.rawName)")
    try streams.print("It is locked; run 'taskkey unlock' to use it.")
  }
}
