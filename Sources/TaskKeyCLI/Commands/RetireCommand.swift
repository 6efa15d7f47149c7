import CommandKit
import TaskCrypto

/// `taskkey retire KID`: removes an old note key once nothing uses it.
struct RetireCommand: Command {
  static let forceOption = OptionSpec.flag(
    "--force", help: "Retire without checking; values sealed by KID fail to open with 'unknown key id' from then on.")

  static let spec = CommandSpec(
    name: "retire", abstract: "Remove an old note key from the vault, refused while a given value still uses it.",
    arguments: [
      ArgumentSpec(name: "KID", kind: .noteKeyID, help: "The key id to remove, 8 hex digits, as 'taskkey keys' lists.")
    ],
    options: [
      ValueBatch.inputsOption, forceOption, ValueBatch.contextOption, ValueBatch.fieldOption,
      ValueBatch.contextFieldOption,
    ],
    json: JSONShape(fields: ["retired", "checked_values"], help: "{retired, checked_values}."),
    discussion: """
      Any value sealed by KID in the inputs refuses the retire (exit 17) and names
      its file and line. The primary key cannot be retired (exit 17): promote or
      rotate first. Values that a retired key sealed never open as plain text; they
      fail with exit 11.
      """,
    example: """
      # After rotate and rewrap, retire the old key once no note uses it:
      taskkey retire 0a1b2c3d -i notes.jsonl -i pages.jsonl --field body
      """)

  let keyID: KeyID
  let batch: ValueBatch
  let force: Bool
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    force = arguments.flag(Self.forceOption)
    batch = try ValueBatch(arguments, inputs: ValueBatch.inputsOption, out: nil)
    keyID = try KeyID(hex: arguments.argument(0)!)
    json = arguments.flag(CommandSpec.jsonOption)
    guard !batch.inputs.isEmpty || force else {
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
    if keyID == (try vault.noteKeyring()).primaryID { throw TaskCryptoError.cannotRetirePrimary(keyID) }
    var checked = 0
    if !batch.inputs.isEmpty {
      var uses = 0
      var first: (input: String, line: Int)?
      try batch.run(to: nil, progress: "retire", streams) { value, _, line, input in
        guard let value else { return .unchanged }
        checked += 1
        // A value this build cannot read might use the key: the batch
        // refuses it (fail closed).
        if try SealedValue.keyID(of: String(decoding: value, as: UTF8.self)) == keyID {
          uses += 1
          if first == nil { first = (input, line) }
        }
        return .unchanged
      }
      if let first, !force {
        throw CLIError.keyStillInUse(
          keyID: keyID.hex, count: uses, firstLine: first.line,
          input: first.input == standardStreamPath ? "standard input" : first.input)
      }
    }
    try vault.updateNoteKeyring { try $0.retire(keyID) }
    if json { return try streams.printJSON(Report(retired: keyID.hex, checkedValues: checked)) }
    try streams.print("Retired note key \(keyID); values it sealed no longer open.")
  }
}
