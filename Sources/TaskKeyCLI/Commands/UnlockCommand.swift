import CommandKit
import FoundationEssentials
import TaskCrypto
import TaskVault

/// `taskkey unlock`: makes the vault readable until reboot, lock or a limit.
struct UnlockCommand: Command {
  static let forOption = OptionSpec.value(
    "--for", "DURATION", .duration,
    help: "Lock again after DURATION: \(DurationText.help) (at most 365d), e.g. 8h. Default: until reboot or lock.")

  static let spec = CommandSpec(
    name: "unlock", abstract: "Unlock the vault for this user until reboot, 'taskkey lock' or --for runs out.",
    options: [forOption] + PassphraseSource.options,
    json: JSONShape(
      fields: ["state", "unlocked_until"], help: "{state: \"unlocked\", unlocked_until (UTC, or null)}."),
    example: """
      # Unlock for a working day and a half hour more:
      taskkey unlock --for 8h30m
      """)

  let duration: DurationText?
  let passphrase: PassphraseSource
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    duration = try durationOption(arguments, Self.forOption)
    try duration?.check(limit: 365 * 86_400, Self.forOption, arguments)
    passphrase = try PassphraseSource(arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Report: Encodable {
    let state: String
    let unlockedUntil: String?
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    try passphrase.checkAvailable()
    let secret = try passphrase.read(prompt: "Vault passphrase: ")
    // The KDF takes about half a second by design: say so on a terminal.
    if let kdf = try? vault.status().kdfParameters { streams.terminalNote("Deriving the vault key with \(kdf)...") }
    try vault.unlock(passphrase: secret, for: duration?.duration)
    var until: Date?
    if case .unlocked(let limit) = try vault.status().lockState { until = limit }
    if json { return try streams.printJSON(Report(state: "unlocked", unlockedUntil: until.map(isoTime))) }
    let times = TimeText(streams)
    try streams.print(
      until.map { "Unlocked until \(times.show($0)), reboot or 'taskkey lock'." }
        ?? "Unlocked until reboot or 'taskkey lock'.")
  }
}
