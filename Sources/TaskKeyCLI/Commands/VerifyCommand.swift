import AssistantKeys
import TaskCrypto

/// `taskkey verify`: checks a key read from standard input, failing closed.
struct VerifyCommand: Command {
  static let name = "verify"
  static let abstract = "Verify an assistant key read from standard input; exit 0 and print who it is."
  static let usage = "taskkey verify [--json] < KEY"
  static let options = """
    OPTIONS:
      --json            Print {"id", "name", "trust", "grants", "expires"}.
      -h, --help        Show this help.

    The key is read from standard input (one trailing newline is ignored),
    never from the command line, where other users and the shell history
    would see it. Every failure has its own exit code: 20 malformed, 21 bad
    checksum, 22 unknown, 23 revoked, 24 expired, 14 vault locked, 15
    registry damaged.
    """
  static let example = """
      # In a script: accept the key only when it verifies.
      taskkey verify < agent.key && echo accepted
    """

  /// More than a key and a newline is certainly not a key.
  static let inputLimit = 1024

  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    json = try arguments.flag("--json")
    if try !arguments.positionals().isEmpty {
      throw arguments.usageError(
        "verify reads the key from standard input; never put a key on the command line, where others can read it")
    }
  }

  func run(_ streams: StandardStreams) throws {
    let presented: SecureBytes
    do {
      presented = try readSecretInput(limit: Self.inputLimit, exact: false, prompt: "Assistant key: ")
    } catch CLIError.inputTooLarge {
      throw CLIError.assistant(.malformedKey(.wrongLength(Self.inputLimit + 1)))
    }
    // Grammar and checksum first: a typo is reported without opening the vault.
    _ = try assistantCall { try presented.withUnsafeBytes { try AssistantKey.check($0) } }
    let registry = try openRegistry(streams)
    let identity = try assistantCall { try presented.withUnsafeBytes { try registry.verify($0) } }
    let description = KeyDescription(identity)
    if json {
      try streams.print(try jsonText(description))
    } else {
      try streams.print("id: \(description.id)")
      try streams.print("name: \(description.name)")
      try streams.print("trust: \(description.trust)")
      try streams.print("grants: \(description.grants.joined(separator: ","))")
      try streams.print("expires: \(description.expires ?? "never")")
    }
  }
}
