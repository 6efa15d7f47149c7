import CommandKit
import TaskCrypto

/// `taskkey promote KID`: makes another note key the primary.
struct PromoteCommand: Command {
  static let spec = CommandSpec(
    name: "promote", abstract: "Make another note key of the vault the primary key (the one that seals).",
    arguments: [
      ArgumentSpec(name: "KID", kind: .noteKeyID, help: "The key id, 8 hex digits, as 'taskkey keys' lists.")
    ],
    json: JSONShape(fields: ["primary", "previous"], help: "{primary, previous}."),
    discussion: """
      Values sealed before keep their key; 'taskkey rewrap' moves them to the new
      primary. Promoting the primary again changes nothing. An id the vault does not
      hold exits 11.
      """,
    example: """
      # Go back to an older key, then retire the one made by mistake:
      taskkey promote 0a1b2c3d
      """)

  let keyID: KeyID
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    keyID = try KeyID(hex: arguments.argument(0)!)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Report: Encodable {
    let primary: String
    let previous: String
  }

  func run(_ streams: StandardStreams) throws {
    var previous = keyID
    try openVault(streams).updateNoteKeyring { keyring in
      previous = keyring.primaryID
      try keyring.promote(keyID)
    }
    if json { return try streams.printJSON(Report(primary: keyID.hex, previous: previous.hex)) }
    try streams.print("Primary note key is now \(keyID) (was \(previous)).")
  }
}
