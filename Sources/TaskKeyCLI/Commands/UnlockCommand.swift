import TaskCrypto
import TaskSystem
import TaskVault

/// `taskkey unlock`: makes the vault readable until reboot, lock or a limit.
struct UnlockCommand: Command {
  static let name = "unlock"
  static let abstract = "Unlock the vault for this user until reboot, 'taskkey lock' or --for runs out."
  static let usage = "taskkey unlock [--for DURATION] [--passphrase-file F | --passphrase-fd N]"
  static let options = """
    OPTIONS:
      --for DURATION    Lock again after DURATION: a number and s, m, h or d
                        (1s to 365d), e.g. 8h. Default: until reboot or lock.
    \(PassphraseSource.help)
      -h, --help        Show this help.
    """
  static let example = """
      # Unlock for a working day:
      taskkey unlock --for 8h
    """

  let duration: Duration?
  let passphrase: PassphraseSource

  init(parsing arguments: inout Arguments) throws {
    if let text = try arguments.option("--for") {
      guard let duration = parseDuration(text) else {
        throw arguments.usageError("invalid --for '\(text)'; use a number and s, m, h or d, e.g. 8h")
      }
      self.duration = duration
    } else {
      duration = nil
    }
    passphrase = try PassphraseSource(parsing: &arguments)
    try arguments.finish()
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    let secret = try passphrase.read(prompt: "Vault passphrase: ")
    // The KDF takes about half a second by design: say so on a terminal,
    // stay quiet when standard error is piped.
    if FileDescriptor.standardError.isTerminal, let kdf = try? vault.status().kdfParameters {
      streams.printError("Deriving the vault key with \(kdf)...")
    }
    try vaultCall { try vault.unlock(passphrase: secret, for: duration) }
    switch try vaultCall({ try vault.status() }).lockState {
    case .unlocked(let until?): try streams.print("Unlocked until \(isoDate(until)), reboot or 'taskkey lock'.")
    default: try streams.print("Unlocked until reboot or 'taskkey lock'.")
    }
  }
}

/// `taskkey lock`: ends the unlocked state now.
struct LockCommand: Command {
  static let name = "lock"
  static let abstract = "Lock the vault now: every process needs the passphrase again."
  static let usage = "taskkey lock"
  static let options = """
    OPTIONS:
      -h, --help        Show this help.
    """
  static let example = """
      # Lock before leaving the machine:
      taskkey lock
    """

  init(parsing arguments: inout Arguments) throws {
    try arguments.finish()
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    try vaultCall { try vault.lock() }
    try streams.print("Locked.")
  }
}
