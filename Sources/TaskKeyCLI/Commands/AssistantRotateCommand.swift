import AssistantKeys

/// `taskkey rotate --assistant NAME`: replaces an assistant's key.
struct AssistantRotateCommand: Command {
  static let name = "rotate"
  static let abstract = "Replace an assistant's key: mint a new one and revoke the old, in one step."
  static let usage = "taskkey rotate --assistant NAME [--overlap DURATION] [--expires DURATION] [--json]"
  static let options = """
    OPTIONS:
      --assistant NAME  The assistant whose key is replaced.
      --overlap D       Let the old key go on verifying for D (90s, 15m, 8h,
                        at most 30d), then revoke it by itself. Default: the
                        old key is revoked at once.
      --expires D       The new key's lifetime (at most 365d). Default: the
                        old key's lifetime, or never.
      --json            Print one object with the new key, as 'mint --json'.
      -h, --help        Show this help.

    The new key takes the old key's trust level and grants. Only the new key
    goes to standard output, once.
    """
  static let example = """
      # Replace the desktop assistant's key, keeping the old one for an hour:
      taskkey rotate --assistant claude-desktop --overlap 1h > agent.key
    """

  let assistant: String
  let overlap: Duration?
  let expires: Duration?
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    guard let assistant = try arguments.option("--assistant") else {
      throw arguments.usageError("missing --assistant NAME")
    }
    self.assistant = assistant
    overlap = try durationOption(&arguments, "--overlap")
    expires = try durationOption(&arguments, "--expires")
    json = try arguments.flag("--json")
    try arguments.finish()
  }

  func run(_ streams: StandardStreams) throws {
    let registry = try openRegistry(streams)
    let minted = try assistantCall {
      try registry.rotate(assistant: assistant, overlap: overlap, expiresAfter: expires)
    }
    let old =
      overlap.map { "the previous key stops verifying in \($0.components.seconds) seconds" }
      ?? "the previous key is revoked"
    try writeMinted(
      minted, json: json, note: "rotated: \(summary(minted.record))\n\(old)\nthe key is shown once: store it now",
      streams)
  }
}
