import AssistantKeys
import CommandKit
import TaskCrypto

/// `taskkey rotate`: a new primary note key; with `--assistant NAME`, a new
/// key for that assistant.
struct RotateCommand: Command {
  static let assistantOption = OptionSpec.value(
    "--assistant", "NAME", .assistantName, help: "The assistant whose key is replaced.")
  static let overlapOption = OptionSpec.value(
    "--overlap", "D", .duration,
    help: "Let the old key go on verifying for D (\(DurationText.help), at most 30d), then revoke it by itself. "
      + "Default: the old key is revoked at once.")
  static let expiresOption = OptionSpec.value(
    "--expires", "D", .duration,
    help: "The new key's lifetime (at most 3650d). Default: the old key's lifetime, or never.")

  static let spec = CommandSpec(
    name: "rotate", abstract: "Make a new primary note key, or with --assistant replace an assistant's key.",
    options: [assistantOption, overlapOption, expiresOption],
    json: JSONShape(
      fields: ["primary", "previous", "keys"],
      help: "note key: {primary, previous, keys}; with --assistant: one object as 'mint --json' prints."),
    discussion: """
      Without --assistant: makes a new random note key with a fresh id and makes it
      the primary; the old keys stay and go on opening their values. Prints the new
      key id. Then 'taskkey rewrap' moves values to it and 'taskkey retire OLD'
      removes the old key; 'taskkey keys' lists them. Rotate well before a key has
      sealed 2^31 values (SECURITY.md).

      With --assistant, the new key takes the old key's trust level and grants. Only
      the new key goes to standard output, once.
      """,
    example: """
      # A new note key, then move the notes to it:
      taskkey rotate
      # Replace the desktop assistant's key, keeping the old one for an hour:
      taskkey rotate --assistant claude-desktop --overlap 1h > agent.key
      """)

  let assistant: String?
  let overlap: DurationText?
  let expires: DurationText?
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    assistant = arguments.value(Self.assistantOption)
    overlap = try durationOption(arguments, Self.overlapOption)
    expires = try durationOption(arguments, Self.expiresOption)
    json = arguments.flag(CommandSpec.jsonOption)
    if assistant == nil && (overlap != nil || expires != nil) {
      throw arguments.usageError("--overlap and --expires go with --assistant NAME")
    }
    try overlap?.check(limit: AssistantKeyRegistry.maximumOverlap, Self.overlapOption, arguments)
    try expires?.check(limit: AssistantKeyRegistry.maximumLifetime, Self.expiresOption, arguments)
  }

  func run(_ streams: StandardStreams) throws {
    guard let assistant else { return try rotateNoteKey(streams) }
    let registry = try openRegistry(streams)
    let minted = try registry.rotate(assistant: assistant, overlap: overlap?.duration, expiresAfter: expires?.duration)
    let old = overlap.map { "the previous key stops verifying in \($0.text)" } ?? "the previous key is revoked"
    let note = "rotated: \(summary(minted.record, TimeText(streams)))\n\(old)\nthe key is shown once: store it now"
    try writeMinted(minted, json: json, note: note, streams)
  }

  struct NoteRotation: Encodable {
    let primary: String
    let previous: String
    let keys: [String]
  }

  /// Adds a fresh primary note key to the vault's keyring.
  func rotateNoteKey(_ streams: StandardStreams) throws {
    var previous = KeyID(rawValue: 0)
    var primary = KeyID(rawValue: 0)
    var keys = [KeyID]()
    try openVault(streams).updateNoteKeyring { keyring in
      previous = keyring.primaryID
      primary = try keyring.rotate().id
      keys = keyring.ids
    }
    if json {
      try streams.printJSON(NoteRotation(primary: primary.hex, previous: previous.hex, keys: keys.map(\.hex)))
    } else {
      try streams.print(primary.hex)
    }
    streams.note(
      "New primary note key \(primary); \(previous) and older keys still open their values.\n"
        + "Next: 'taskkey rewrap' the stored values, then 'taskkey retire \(previous) --input …'.")
  }
}
