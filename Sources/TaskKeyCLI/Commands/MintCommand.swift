import AssistantKeys
import CommandKit

/// `taskkey mint`: makes a new assistant key and prints it once.
struct MintCommand: Command {
  static let nameOption = OptionSpec.value(
    "--name", "N", .text, help: "The assistant: 1 to 64 of A-Z a-z 0-9 . _ -.", required: true)
  static let grantOption = OptionSpec.value(
    "--grant", "CAP",
    help: "A capability: notes:read, pages:write or tasks:write; repeat for more.",
    repeatable: true)
  static let expiresOption = OptionSpec.value(
    "--expires", "D", .duration, help: "Stop verifying after D (\(DurationText.help), at most 3650d). Default: never.")

  static let spec = CommandSpec(
    name: "mint", abstract: "Mint a key for an assistant; only the key goes to standard output, once.",
    options: [nameOption, trustOption, grantOption, expiresOption],
    json: JSONShape(
      fields: ["key"] + KeyDescription.recordFields,
      help: "{key, " + KeyDescription.recordFields.joined(separator: ", ") + "} instead of the key alone."),
    discussion: """
      The vault must be unlocked. The registry keeps only SHA-256 of the key: store
      the key now, it cannot be shown again.
      """,
    example: """
      # A read-only key for the desktop assistant, valid for 90 days:
      taskkey mint --name claude-desktop --trust restricted --grant notes:read --expires 90d > agent.key
      """)

  let name: String
  let trust: TrustLevel
  let grants: [String]
  let expires: DurationText?
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    name = arguments.value(Self.nameOption)!
    trust = arguments.value(trustOption).flatMap(TrustLevel.init(rawValue:)) ?? .standard
    grants = arguments.values(Self.grantOption)
    // A grant the gate does not know would mint a key whose every call is refused: a usage error (64).
    let known = AssistantKeyRegistry.knownGrants
    if let unknown = grants.first(where: { !known.contains($0) }) {
      let guess = closestWord(to: unknown, among: known)
      throw arguments.usageError(
        "unknown \(Self.grantOption.long) '\(unknown)'"
          + (guess.map { "; did you mean '\($0)'?" } ?? "; use \(ParsedArguments.list(known))"))
    }
    expires = try durationOption(arguments, Self.expiresOption)
    try expires?.check(limit: AssistantKeyRegistry.maximumLifetime, Self.expiresOption, arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ streams: StandardStreams) throws {
    let registry = try openRegistry(streams)
    let minted = try registry.mint(name: name, trust: trust, grants: grants, expiresAfter: expires?.duration)
    let note = "minted \(summary(minted.record, TimeText(streams)))\nthe key is shown once: store it now"
    try writeMinted(minted, json: json, note: note, streams)
  }
}
