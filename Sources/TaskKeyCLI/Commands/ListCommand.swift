import AssistantKeys
import CommandKit
import FoundationEssentials

/// `taskkey list`: the assistant keys, revoked ones marked; never a key.
struct ListCommand: Command {
  static let spec = CommandSpec(
    name: "list", abstract: "List assistant keys with status, trust, grants and last use (never the keys).",
    json: JSONShape(
      fields: ["keys"],
      help: "{keys: [{" + KeyDescription.recordFields.joined(separator: ", ")
        + "}]}; status is active, overlapping, revoked or expired."),
    discussion: """
      Columns: ID, STATUS, NAME, TRUST, CREATED, EXPIRES, LAST USED, GRANTS. Times
      are to the minute (last use is recorded to the minute), local on a terminal and
      UTC otherwise. EXPIRES is when the key stops verifying: for an overlapping key,
      the end of its overlap. Revoked keys stay listed, marked revoked.
      """,
    example: """
      # Which keys are still good?
      taskkey list | grep active
      """)

  let json: Bool

  init(_ arguments: ParsedArguments) {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ streams: StandardStreams) throws {
    let keys = try openRegistry(streams).keys().map(KeyDescription.init)
    if json {
      let data = JSONValue.object(["keys": .array(keys.map(\.jsonObject))]).encoded
      return try streams.write(data + [UInt8(ascii: "\n")])
    }
    let times = TimeText(streams)
    func minute(_ date: Date?, _ none: String) -> String { date.map(times.showMinute) ?? none }
    try streams.print(
      ["ID", "STATUS", "NAME", "TRUST", "CREATED", "EXPIRES", "LAST USED", "GRANTS"].joined(separator: "\t"))
    for key in keys {
      let fields = [
        key.id, key.status ?? "", key.name, key.trust, minute(key.created, ""), minute(key.expires, "never"),
        minute(key.lastUsed, "never"), key.grants.isEmpty ? "-" : key.grants.joined(separator: ","),
      ]
      try streams.print(fields.joined(separator: "\t"))
    }
  }
}
