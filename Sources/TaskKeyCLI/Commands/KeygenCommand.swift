import CommandKit
import TaskCrypto

/// `taskkey keygen`: writes a new random key file.
struct KeygenCommand: Command {
  static let outOption = OptionSpec.value(
    "--out", short: "o", "F", .file, help: "The key file to create; an existing file is never replaced.",
    required: true)

  static let spec = CommandSpec(
    name: "keygen", abstract: "Make a new random note key and write it to a new 0600 key file.",
    options: [outOption], json: JSONShape(fields: ["key_id", "path"], help: "{key_id, path}."),
    discussion: "Prints the new key id. The key itself goes only into the file.",
    example: """
      # Make a key for scripts and audits:
      taskkey keygen -o note.key
      """)

  let path: String
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    path = arguments.value(Self.outOption)!
    try refuseStandardStream(path, option: Self.outOption, arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Report: Encodable {
    let keyId: String
    let path: String
  }

  func run(_ streams: StandardStreams) throws {
    // Cheap check first: an existing file is refused before a key is made.
    if ProcessIO.exists(path) { throw CLIError.fileExists(path: path) }
    let key = try NoteKey.generate()
    try KeyFile.create(path: path, key: key)
    if json { return try streams.printJSON(Report(keyId: key.id.hex, path: path)) }
    try streams.print(key.id.hex)
  }
}
