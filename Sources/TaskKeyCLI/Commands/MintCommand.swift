import AssistantKeys

/// `taskkey mint`: makes a new assistant key and prints it once.
struct MintCommand: Command {
  static let name = "mint"
  static let abstract = "Mint a key for an assistant; only the key goes to standard output, once."
  static let usage = "taskkey mint --name N [--trust LEVEL] [--grant CAP]... [--expires DURATION] [--json]"
  static let options = """
    OPTIONS:
      --name N          The assistant: 1 to 64 of A-Z a-z 0-9 . _ -.
      --trust LEVEL     restricted, standard (default) or elevated.
      --grant CAP       A capability, such as notes:read (1 to 64 of a-z 0-9
                        . _ : -); repeat for more, at most 16.
      --expires D       Stop verifying after D: 90s, 15m, 8h, 30d (at most
                        365d). Default: never.
      --json            Print one object {"key", "id", "name", "trust",
                        "grants", "expires"} on standard output instead.
      -h, --help        Show this help.

    The vault must be unlocked. The registry keeps only SHA-256 of the key:
    store the key now, it cannot be shown again.
    """
  static let example = """
      # A read-only key for the desktop assistant, valid for 90 days:
      taskkey mint --name claude-desktop --trust restricted --grant notes:read --expires 90d > agent.key
    """

  let name: String
  let trust: TrustLevel
  let grants: [String]
  let expires: Duration?
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    guard let name = try arguments.option("--name") else { throw arguments.usageError("missing --name N") }
    self.name = name
    trust = try trustOption(&arguments) ?? .standard
    grants = try arguments.options("--grant")
    expires = try durationOption(&arguments, "--expires")
    json = try arguments.flag("--json")
    try arguments.finish()
  }

  func run(_ streams: StandardStreams) throws {
    let registry = try openRegistry(streams)
    let minted = try assistantCall {
      try registry.mint(name: name, trust: trust, grants: grants, expiresAfter: expires)
    }
    try writeMinted(
      minted, json: json, note: "minted \(summary(minted.record))\nthe key is shown once: store it now", streams)
  }
}

/// Parses `--trust LEVEL`.
func trustOption(_ arguments: inout Arguments) throws -> TrustLevel? {
  guard let text = try arguments.option("--trust") else { return nil }
  guard let level = TrustLevel(rawValue: text) else {
    throw arguments.usageError("--trust takes restricted, standard or elevated")
  }
  return level
}
