import TaskCrypto

/// `taskkey keys`: the note keys of the vault, changing nothing.
struct KeysCommand: Command {
  static let spec = CommandSpec(
    name: "keys", abstract: "List the vault's note keys and which one is primary (never key bytes).",
    json: JSONShape(
      fields: ["primary", "keys"], help: "{primary, keys: [{id, primary (bool)}]}, keys in the order they were added."),
    discussion: """
      The primary key seals new values; every listed key opens the values it
      sealed. A retired key is no longer listed: values it sealed fail with exit 11.
      'taskkey promote KID' makes another listed key the primary.
      """,
    example: """
      # Which key ids does the vault hold?
      taskkey keys
      """)

  let json: Bool

  init(_ arguments: ParsedArguments) {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Listed: Encodable {
    let id: String
    let primary: Bool
  }

  struct Listing: Encodable {
    let primary: String
    let keys: [Listed]
  }

  func run(_ streams: StandardStreams) throws {
    let keyring = try openVault(streams).noteKeyring()
    let listing = Listing(
      primary: keyring.primaryID.hex, keys: keyring.ids.map { Listed(id: $0.hex, primary: $0 == keyring.primaryID) })
    if json { return try streams.printJSON(listing) }
    try streams.print("ID\tPRIMARY")
    for key in listing.keys { try streams.print("\(key.id)\t\(key.primary ? "primary" : "-")") }
  }
}
