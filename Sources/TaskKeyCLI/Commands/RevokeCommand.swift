import AssistantKeys

/// `taskkey revoke ID`: revokes an assistant key for good.
struct RevokeCommand: Command {
  static let name = "revoke"
  static let abstract = "Revoke an assistant key by its id, at once and for good."
  static let usage = "taskkey revoke ID"
  static let options = """
    ARGUMENTS:
      ID                The key's public id, tkid_ and 16 hex digits, as
                        'mint' and 'list' print it.

    OPTIONS:
      -h, --help        Show this help.

    One durable write; the next verify in any process refuses the key.
    Revoking a revoked key succeeds and changes nothing.
    """
  static let example = """
      # Revoke a key that leaked:
      taskkey revoke tkid_66a2575b29852de3
    """

  let id: AssistantKeyID

  init(parsing arguments: inout Arguments) throws {
    let words = try arguments.positionals()
    guard words.count == 1 else {
      throw arguments.usageError(words.isEmpty ? "missing ID" : "give exactly one ID")
    }
    guard let id = AssistantKeyID(words[0]) else {
      throw arguments.usageError("'\(words[0].prefix(32))' is not a key id (tkid_ and 16 lowercase hex digits)")
    }
    self.id = id
  }

  func run(_ streams: StandardStreams) throws {
    let registry = try openRegistry(streams)
    let record = try assistantCall { try registry.revoke(id) }
    try streams.print("revoked \(record.id) (assistant '\(record.name)')")
  }
}
