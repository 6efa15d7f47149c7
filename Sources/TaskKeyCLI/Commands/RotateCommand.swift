import AssistantKeys
import Foundation
import TaskCrypto

/// `taskkey rotate`: a new primary note key; with `--assistant NAME`, a new
/// key for that assistant.
struct RotateCommand: Command {
  static let name = "rotate"
  static let abstract = "Make a new primary note key, or with --assistant replace an assistant's key."
  static let usage =
    "taskkey rotate [--json] | rotate --assistant NAME [--overlap DURATION] [--expires DURATION] [--json]"
  static let options = """
    Without --assistant: makes a new random note key with a fresh id and makes
    it the primary; the old keys stay and go on opening their values. Prints
    the new key id. Then 'taskkey rewrap' moves values to it and 'taskkey
    retire OLD' removes the old key. Rotate well before a key has sealed 2^31
    values (SECURITY.md §5).

    OPTIONS:
      --assistant NAME  The assistant whose key is replaced.
      --overlap D       Let the old key go on verifying for D (90s, 15m, 8h,
                        at most 30d), then revoke it by itself. Default: the
                        old key is revoked at once.
      --expires D       The new key's lifetime (at most 365d). Default: the
                        old key's lifetime, or never.
      --json            Note key: {"primary", "previous", "keys"}. Assistant:
                        one object with the new key, as 'mint --json'.
      -h, --help        Show this help.

    The new key takes the old key's trust level and grants. Only the new key
    goes to standard output, once.
    """
  static let example = """
      # A new note key, then move the notes to it:
      taskkey rotate
      # Replace the desktop assistant's key, keeping the old one for an hour:
      taskkey rotate --assistant claude-desktop --overlap 1h > agent.key
    """

  let assistant: String?
  let overlap: Duration?
  let expires: Duration?
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    assistant = try arguments.option("--assistant")
    overlap = try durationOption(&arguments, "--overlap")
    expires = try durationOption(&arguments, "--expires")
    json = try arguments.flag("--json")
    try arguments.finish()
    if assistant == nil && (overlap != nil || expires != nil) {
      throw arguments.usageError("--overlap and --expires go with --assistant NAME")
    }
  }

  func run(_ streams: StandardStreams) throws {
    guard let assistant else { return try rotateNoteKey(streams) }
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

  struct NoteRotation: Encodable {
    let primary: String
    let previous: String
    let keys: [String]
  }

  /// Adds a fresh primary note key to the vault's keyring.
  func rotateNoteKey(_ streams: StandardStreams) throws {
    var previous = KeyID(rawValue: 0)
    var keys = [KeyID]()
    let vault = try openVault(streams)
    try vaultCall {
      try vault.updateNoteKeyring { keyring in
        previous = keyring.primaryID
        try keyring.rotate()
        keys = keyring.ids
      }
    }
    let primary = keys.last!
    if json {
      let output = NoteRotation(primary: primary.hex, previous: previous.hex, keys: keys.map(\.hex))
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys]
      try streams.writeOutput(Array(try encoder.encode(output)) + [UInt8(ascii: "\n")])
    } else {
      try streams.print(primary.hex)
    }
    streams.printError(
      "New primary note key \(primary); \(previous) and older keys still open their values.\n"
        + "Next: 'taskkey rewrap' the stored values, then 'taskkey retire \(previous) --input …'.")
  }
}
