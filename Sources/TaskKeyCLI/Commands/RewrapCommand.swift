<<<<<<< HEAD
=======
import Foundation
>>>>>>> main
import TaskCrypto
import TaskSystem
import TaskVault

<<<<<<< HEAD
=======
/// How `rewrap` and `retire` read a batch of stored values: one per line, or
/// JSON lines with the value (and optionally its context) in named fields.
struct ValueBatch {
  /// The largest batch read from standard input or a file: 256 MiB.
  static let byteLimit = 256 << 20

  var field: String?
  var contextField: String?
  var context: String

  static let help = """
      --context C       The context of every value (default: empty).
      --field F         Input is JSON lines; the value is the string in field
                        F of each object (null or missing: left alone).
      --context-field G With --field: each value's context is the string in
                        field G of its object (for example "note/<id>/body").
    """

  init(parsing arguments: inout Arguments) throws {
    field = try arguments.option("--field")
    contextField = try arguments.option("--context-field")
    let fixed = try arguments.option("--context")
    if contextField != nil && field == nil { throw arguments.usageError("--context-field needs --field") }
    if contextField != nil && fixed != nil { throw arguments.usageError("give --context or --context-field, not both") }
    context = fixed ?? ""
  }

  /// One input line: the value found in it, its context, and how to put a
  /// new value back.
  struct Line {
    var number: Int
    var value: String?
    var context: String
    var object: [String: Any]?
    var raw: String
  }

  /// Splits input into lines (a final newline ends the last line, it does
  /// not start another) and finds each value. A line that is not UTF-8 is
  /// refused, never repaired: it would be written back with other bytes.
  func lines(of input: [UInt8]) throws -> [Line] {
    guard var text = String(validating: input, as: UTF8.self) else {
      let lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
      let bad = lines.firstIndex { String(validating: $0, as: UTF8.self) == nil } ?? 0
      throw CLIError.malformedInput(line: bad + 1, reason: "not valid UTF-8; nothing was changed")
    }
    if text.hasSuffix("\n") { text.removeLast() }
    guard !input.isEmpty else { return [] }
    return try text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, raw in
      let number = index + 1
      guard let field else {
        return Line(number: number, value: String(raw), context: context, object: nil, raw: String(raw))
      }
      guard let data = raw.data(using: .utf8),
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
      else { throw CLIError.malformedInput(line: number, reason: "not a JSON object") }
      var lineContext = context
      if let contextField {
        guard let found = object[contextField] as? String else {
          throw CLIError.malformedInput(line: number, reason: "field '\(contextField)' is not a string")
        }
        lineContext = found
      }
      switch object[field] {
      case nil, is NSNull:
        return Line(number: number, value: nil, context: lineContext, object: object, raw: String(raw))
      case let value as String:
        return Line(number: number, value: value, context: lineContext, object: object, raw: String(raw))
      default:
        throw CLIError.malformedInput(line: number, reason: "field '\(field)' is not a string")
      }
    }
  }

  /// The line with `newValue` in place of its value.
  func render(_ line: Line, newValue: String) throws -> String {
    guard let field, var object = line.object else { return newValue }
    object[field] = newValue
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self)
  }
}

/// Draws `[####      ] n/total` on standard error when it is a terminal, and
/// nothing when it is piped or redirected.
struct ProgressBar {
  let total: Int
  let label: String
  let enabled = FileDescriptor.standardError.isTerminal
  private var shown = -1

  init(total: Int, label: String) {
    self.total = total
    self.label = label
  }

  mutating func update(_ done: Int) {
    guard enabled, total > 0 else { return }
    let percent = done * 100 / total
    guard percent != shown else { return }
    shown = percent
    let filled = percent * 30 / 100
    let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
    let text = "\r\(label) [\(bar)] \(done)/\(total)"
    try? FileDescriptor.standardError.write(Array((text + (done == total ? "\n" : "")).utf8))
  }
}

>>>>>>> main
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
<<<<<<< HEAD
    if !batch.inputs.isEmpty {
      var uses = 0
      var first: (input: String, line: Int)?
      try batch.run(to: nil, progress: "retire") { value, _, line, input in
        guard let value else { return .unchanged }
=======
    if let input {
      let bytes: [UInt8]
      if input == "-" {
        bytes = try streams.readInput(ValueBatch.byteLimit)
      } else {
        bytes = try readInputFile(input, limit: ValueBatch.byteLimit)
      }
      var uses = [Int]()
      for line in try batch.lines(of: bytes) {
        guard let value = line.value else { continue }
>>>>>>> main
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
