import TaskCrypto
import TaskVault

/// `taskkey rewrap`: re-seals values under the primary note key.
struct RewrapCommand: Command {
  static let name = "rewrap"
  static let abstract = "Re-seal values from standard input under the primary note key, after a rotate."
  static let usage =
    "taskkey rewrap [--context C | --field F [--context-field G]] [--seal-plain] [--input F] [--out F]"
  static let options = """
    OPTIONS:
    \(ValueBatch.help)
    \(ValueBatch.streamHelp)
      --seal-plain      Also seal plain values (default: they pass through).
      -h, --help        Show this help.

    Values already under the primary key are written back unchanged. All or
    nothing: if any value does not open, nothing is written and the line is
    named. Lines stream through: with --out, memory stays flat however long
    the input. JSON lines are written back byte for byte except the value.
    A progress bar is drawn on standard error when it is a terminal and the
    input is a file.
    """
  static let example = """
      # After 'taskkey rotate', move every note body to the new key:
      taskkey rewrap --field body --context-field ctx --input notes.jsonl --out notes.jsonl
    """

  let batch: ValueBatch
  let sealPlain: Bool

  init(parsing arguments: inout Arguments) throws {
    batch = try ValueBatch(parsing: &arguments)
    sealPlain = try arguments.flag("--seal-plain")
    try arguments.finish()
  }

  func run(_ streams: StandardStreams) throws {
    let keyring = try vaultCall { try openVault(streams).noteKeyring() }
    let output = try BatchOutput(path: batch.output, streams: streams)
    var resealed = 0
    var sealed = 0
    var current = 0
    var plain = 0
    try batch.run(to: output, progress: "rewrap") { value, context, line, _ in
      guard let value else { return .unchanged }
      let text = String(decoding: value, as: UTF8.self)
      do {
        guard SealedValue.isSealed(text) else {
          guard sealPlain else {
            plain += 1
            return .unchanged
          }
          sealed += 1
          return .replaced(try SealedValue.seal(bytes: value, using: keyring.primary, context: context))
        }
        let result = try SealedValue.reseal(text, using: keyring, context: context)
        guard result.changed else {
          current += 1
          return .unchanged
        }
        resealed += 1
        return .replaced(result.value)
      } catch let error as TaskCryptoError {
        throw CLIError.valueRefused(line: line, error)
      }
    }
    try output.commit()
    streams.printError(
      "rewrap: \(resealed) re-sealed under \(keyring.primaryID), \(sealed) sealed (were plain), "
        + "\(current) already current, \(plain) plain passed through")
  }
}

/// `taskkey retire KID`: removes an old note key once nothing uses it.
struct RetireCommand: Command {
  static let name = "retire"
  static let abstract = "Remove an old note key from the vault, refused while a given value still uses it."
  static let usage = "taskkey retire KID (--input F... [--context C | --field F] | --force)"
  static let options = """
    ARGUMENTS:
      KID               The key id to remove (8 hex digits, from 'taskkey status').

    OPTIONS:
      --input F         Stored values to check, as for rewrap ('-' for
                        standard input); give --input once per file. Any
                        value sealed by KID refuses the retire (exit 17) and
                        names its file and line.
      --field F         Input is JSON lines with the value in field F.
      --force           Retire without checking; values sealed by KID will
                        fail to open with 'unknown key id' from then on.
      -h, --help        Show this help.

    The primary key cannot be retired: rotate first. Values that a retired key
    sealed never open as plain text; they fail with exit 11.
    """
  static let example = """
      # After rotate and rewrap, retire the old key once no note uses it:
      taskkey retire 0a1b2c3d --input notes.jsonl --input pages.jsonl --field body
    """

  let keyID: KeyID
  let batch: ValueBatch
  let force: Bool

  init(parsing arguments: inout Arguments) throws {
    force = try arguments.flag("--force")
    batch = try ValueBatch(parsing: &arguments, severalInputs: true, output: false)
    let rest = try arguments.positionals()
    guard rest.count == 1 else { throw arguments.usageError(rest.isEmpty ? "missing KID" : "expected one KID") }
    do {
      keyID = try KeyID(hex: rest[0])
    } catch let error as TaskCryptoError {
      throw CLIError.crypto(error)
    }
    guard !batch.inputs.isEmpty || force else {
      throw arguments.usageError("give --input F with the values to check, or --force to retire without checking")
    }
  }

  func run(_ streams: StandardStreams) throws {
    if !batch.inputs.isEmpty {
      var uses = 0
      var first: (input: String, line: Int)?
      try batch.run(to: nil, progress: "retire") { value, _, line, input in
        guard let value else { return .unchanged }
        do {
          if try SealedValue.keyID(of: String(decoding: value, as: UTF8.self)) == keyID {
            uses += 1
            if first == nil { first = (input, line) }
          }
        } catch let error as TaskCryptoError {
          // A value this build cannot read might use the key: fail closed.
          throw CLIError.valueRefused(line: line, error)
        }
        return .unchanged
      }
      if let first, !force {
        throw CLIError.keyStillInUse(
          keyID: keyID.hex, count: uses, firstLine: first.line,
          input: first.input == "-" ? "standard input" : first.input
        )
      }
    }
    try vaultCall { try openVault(streams).updateNoteKeyring { try $0.retire(keyID) } }
    try streams.print("Retired note key \(keyID); values it sealed no longer open.")
  }
}
