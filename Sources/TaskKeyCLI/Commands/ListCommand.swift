import AssistantKeys

/// `taskkey list`: the assistant keys, revoked ones marked; never a key.
struct ListCommand: Command {
  static let name = "list"
  static let abstract = "List assistant keys with status, trust, grants and last use (never the keys)."
  static let usage = "taskkey list [--json]"
  static let options = """
    OPTIONS:
      --json            Print {"keys": [{"id", "name", "trust", "grants",
                        "created", "expires", "status", "revoked",
                        "overlap_until", "last_used"}]}; status is active,
                        overlapping, revoked or expired.
      -h, --help        Show this help.

    Columns: ID, STATUS, NAME, TRUST, CREATED, EXPIRES, LAST USED (to the
    minute), GRANTS. Revoked keys stay listed, marked revoked.
    """
  static let example = """
      # Which keys are still good?
      taskkey list | grep active
    """

  struct Listing: Encodable {
    let keys: [KeyDescription]
  }

  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    json = try arguments.flag("--json")
    try arguments.finish()
  }

  func run(_ streams: StandardStreams) throws {
    let registry = try openRegistry(streams)
    let keys = try assistantCall { try registry.keys() }.map(KeyDescription.init)
    if json {
      try streams.print(try jsonText(Listing(keys: keys)))
      return
    }
    try streams.print(
      ["ID", "STATUS", "NAME", "TRUST", "CREATED", "EXPIRES", "LAST USED", "GRANTS"].joined(separator: "\t"))
    for key in keys {
      let fields = [
        key.id, key.status ?? "", key.name, key.trust, key.created ?? "", key.expires ?? "never",
        key.lastUsed ?? "never", key.grants.isEmpty ? "-" : key.grants.joined(separator: ","),
      ]
      try streams.print(fields.joined(separator: "\t"))
    }
  }
}
