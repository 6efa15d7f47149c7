import AssistantKeys
import CommandKit

/// `taskkey revoke ID`: revokes an assistant key for good.
struct RevokeCommand: Command {
  static let spec = CommandSpec(
    name: "revoke", abstract: "Revoke an assistant key by its id, at once and for good.",
    arguments: [
      ArgumentSpec(
        name: "ID", kind: .assistantKeyID,
        help: "The key's public id, tkid_ and 16 hex digits, as 'mint' and 'list' print it.")
    ],
    json: JSONShape(fields: ["revoked", "name"], help: "{revoked (the id), name}."),
    discussion: """
      One durable write; the next verify in any process refuses the key. Revoking a
      revoked key succeeds and changes nothing.
      """,
    example: """
      # Revoke a key that leaked:
      taskkey revoke tkid_66a2575b29852de3
      """)

  let id: AssistantKeyID
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    let text = arguments.argument(0)!
    guard let id = AssistantKeyID(text) else {
      throw arguments.usageError("'\(text.prefix(32))' is not a key id (tkid_ and 16 lowercase hex digits)")
    }
    self.id = id
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Report: Encodable {
    let revoked: String
    let name: String
  }

  func run(_ streams: StandardStreams) throws {
    let record = try openRegistry(streams).revoke(id)
    if json { return try streams.printJSON(Report(revoked: record.id.text, name: record.name)) }
    try streams.print("revoked \(record.id) (assistant '\(record.name)')")
  }
}
