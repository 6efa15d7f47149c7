import CommandKit
import TaskCrypto
import TaskVault

/// `taskkey keys`: the note keys of the vault, changing nothing.
struct KeysCommand: Command {
  static let spec = CommandSpec(
    name: "keys", abstract: "List the vault's note keys and which one is primary (never key bytes).",
    json: JSONShape(
      fields: ["primary", "keys", "retired"],
      help: "{primary, keys: [{id, primary (bool)}], retired: [id]}, keys in the order they were added, retired "
        + "ids ascending."),
    discussion: """
      The primary key seals new values; every active key opens the values it
      sealed. A retired key is listed as retired: its bytes are gone, values it
      sealed fail with exit 11, and no sync bundle adds it back.
      'taskkey promote KID' makes another active key the primary. There is no
      creation time: the vault stores a note key as its id and its bytes only
      (docs/formats/store-contents.md).
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
    let retired: [String]
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    let keyring = try vault.noteKeyring()
    let listing = Listing(
      primary: keyring.primaryID.hex, keys: keyring.ids.map { Listed(id: $0.hex, primary: $0 == keyring.primaryID) },
      retired: try vault.retiredNoteKeyIDs().map(\.hex))
    if json { return try streams.printJSON(listing) }
    try streams.print("ID\tSTATUS")
    for key in listing.keys { try streams.print("\(key.id)\t\(key.primary ? "primary" : "active")") }
    for id in listing.retired { try streams.print("\(id)\tretired") }
  }
}
