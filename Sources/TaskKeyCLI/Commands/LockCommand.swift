import CommandKit

/// `taskkey lock`: ends the unlocked state now.
struct LockCommand: Command {
  static let spec = CommandSpec(
    name: "lock", abstract: "Lock the vault now: every process needs the passphrase again.",
    json: JSONShape(fields: ["state"], help: "{state: \"locked\"}."),
    example: """
      # Lock before leaving the machine:
      taskkey lock
      """)

  let json: Bool

  init(_ arguments: ParsedArguments) {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Report: Encodable {
    let state: String
  }

  func run(_ streams: StandardStreams) throws {
    try openVault(streams).lock()
    if json { return try streams.printJSON(Report(state: "locked")) }
    try streams.print("Locked.")
  }
}
