import TaskCrypto

/// `taskkey retire KID`: removes an old note key once nothing uses it.
struct RetireCommand: Command {
  static let inputOption = OptionSpec.value(
    "--input", short: "i", "F", .file,
    help: "Stored values to check, as for rewrap ('-' for standard input); repeat for several files. Any value "
      + "sealed by KID refuses the retire (exit 17) and names its line.",
    repeatable: true)
  static let forceOption = OptionSpec.flag(
    "--force", help: "Retire without checking; values sealed by KID fail to open with 'unknown key id' from then on.")

  static let spec = CommandSpec(
    name: "retire", abstract: "Remove an old note key from the vault, refused while a given value still uses it.",
    arguments: [
      ArgumentSpec(name: "KID", kind: .noteKeyID, help: "The key id to remove, 8 hex digits, as 'taskkey keys' lists.")
    ],
    options: [inputOption, forceOption] + ValueBatch.options,
    json: JSONShape(fields: ["retired", "checked_values"], help: "{retired, checked_values}."),
    discussion: """
      The primary key cannot be retired (exit 17): promote or rotate first. Values
      that a retired key sealed never open as plain text; they fail with exit 11.
      """,
    example: """
      # After rotate and rewrap, retire the old key once no note uses it:
      taskkey retire 0a1b2c3d --input notes.new.jsonl --field body
      """)

  let keyID: KeyID
  let inputs: [String]
  let batch: ValueBatch
  let force: Bool
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    inputs = arguments.values(Self.inputOption)
    force = arguments.flag(Self.forceOption)
    batch = try ValueBatch(arguments)
    keyID = try KeyID(hex: arguments.argument(0)!)
    json = arguments.flag(CommandSpec.jsonOption)
    guard !inputs.isEmpty || force else {
      throw arguments.usageError("give --input F with the values to check, or --force to retire without checking")
    }
  }

  struct Report: Encodable {
    let retired: String
    let checkedValues: Int
  }

  func run(_ streams: StandardStreams) throws {
    let vault = try openVault(streams)
    // Cheap check first: the primary is refused before any input is read.
    let keyring = try vault.noteKeyring()
    if keyID == keyring.primaryID { throw TaskCryptoError.cannotRetirePrimary(keyID) }
    var checked = 0
    for input in inputs {
      let bytes =
        input == "-"
        ? try streams.readAll(limit: ValueBatch.byteLimit) : try ProcessIO.readFile(input, limit: ValueBatch.byteLimit)
      var uses = [Int]()
      for line in try batch.lines(of: bytes) {
        guard let value = line.value else { continue }
        checked += 1
        do {
          if try SealedValue.keyID(of: value) == keyID { uses.append(line.number) }
        } catch let error as TaskCryptoError {
          // A value this build cannot read might use the key: fail closed.
          throw CLIError.valueRefused(line: line.number, error)
        }
      }
      if let first = uses.first, !force {
        throw CLIError.keyStillInUse(keyID: keyID.hex, count: uses.count, firstLine: first)
      }
    }
    try vault.updateNoteKeyring { try $0.retire(keyID) }
    if json { return try streams.printJSON(Report(retired: keyID.hex, checkedValues: checked)) }
    try streams.print("Retired note key \(keyID); values it sealed no longer open.")
  }
}
