import CommandKit
import TaskCrypto

/// How `rewrap`, `retire`, and `seal`/`open` with `--field`, read a batch of
/// stored values: one per line, or JSON lines with the value (and
/// optionally its context) in named fields. Lines stream through in
/// constant memory; with `--out` the result goes to a file all or nothing.
struct ValueBatch {
  var field: String?
  var contextField: String?
  var context: String
  var inputs: [String]
  var output: String?

  /// `-c, --context C`: the same option as seal's and open's.
  static let contextOption = NoteOptions.contextOption
  static let fieldOption = OptionSpec.value(
    "--field", "F",
    help: "Input is JSON lines; the value is the string in field F of each object (null or missing: left alone).")
  static let contextFieldOption = OptionSpec.value(
    "--context-field", "G",
    help: "With --field: each value's context is the string in field G of its object (for example "
      + "\"note/<id>/body\").")
  static let inputOption = OptionSpec.value(
    "--input", short: "i", "F", .file, help: "Read the values from F (default: standard input; '-' is standard input).")
  static let inputsOption = OptionSpec.value(
    "--input", short: "i", "F", .file,
    help: "Stored values to check, as for rewrap ('-' is standard input); repeat for several files.",
    repeatable: true)
  static let outOption = OptionSpec.value(
    "--out", short: "o", "F", .file,
    help: "Write the result to F, replacing it all or nothing (a temporary file beside F, renamed at the end), "
      + "in constant memory. F may be the input itself. Without it the result goes to standard output once every "
      + "value has been processed, so it is held in memory.")
  /// `--field`, `--context-field`, `--input`, `--out` (the context option is
  /// declared by the command).
  static let streamOptions = [fieldOption, contextFieldOption, inputOption, outOption]

  /// Reads the options; `inputs` is `inputOption` or `inputsOption`, and
  /// `out` nil for a command that writes nothing (retire).
  ///
  /// - Throws: a usage error for `--context-field` without `--field`, both
  ///   context options, or `-` given twice.
  init(_ arguments: ParsedArguments, inputs inputOption: OptionSpec = inputOption, out: OptionSpec? = outOption) throws
  {
    field = arguments.value(Self.fieldOption)
    contextField = arguments.value(Self.contextFieldOption)
    let fixed = arguments.value(Self.contextOption)
    if contextField != nil && field == nil { throw arguments.usageError("--context-field needs --field") }
    if contextField != nil && fixed != nil { throw arguments.usageError("give --context or --context-field, not both") }
    context = fixed ?? ""
    inputs = arguments.values(inputOption)
    output = out.flatMap { arguments.value($0) }
    if inputs.filter({ $0 == "-" }).count > 1 { throw arguments.usageError("standard input ('-') can be read once") }
  }

  /// Whether `--json` asks for the counts as one JSON object on standard
  /// output, which is free only when the values go to a file.
  ///
  /// - Throws: a usage error for `--json` without `--out F`.
  func jsonReport(_ arguments: ParsedArguments) throws -> Bool {
    guard arguments.flag(CommandSpec.jsonOption) else { return false }
    guard let output, output != standardStreamPath else {
      throw arguments.usageError("--json needs --out F (the values themselves go to standard output)")
    }
    return true
  }

  /// What to do with one value.
  enum Outcome {
    /// Write the line back as it came.
    case unchanged
    /// Put this text in place of the value.
    case replaced(String)
  }

  /// Streams every line of every input (standard input when none) through
  /// `transform`, which sees each value's bytes (nil when a JSON line has
  /// no string in the field) and its context, and writes the lines with
  /// replaced values to `output` (nil: nowhere).
  ///
  /// - Throws: `CLIError.malformedInput` for a line that is not a JSON
  ///   object with a string (or null) in the fields, the error `transform`
  ///   throws (a `TaskCryptoError` as `CLIError.valueRefused` naming the
  ///   line: the one place a refused value is mapped), or an I/O error; then
  ///   nothing is written.
  func run(
    to output: BatchOutput?, progress label: String, _ streams: StandardStreams,
    _ body: (_ value: UnsafeRawBufferPointer?, _ context: String, _ line: Int, _ input: String) throws -> Outcome
  ) throws {
    func transform(_ value: UnsafeRawBufferPointer?, _ context: String, _ line: Int, _ input: String) throws -> Outcome
    {
      do {
        return try body(value, context, line, input)
      } catch let error as TaskCryptoError {
        throw CLIError.valueRefused(line: line, error)
      }
    }
    let names = [field, contextField].compactMap { $0 }
    var rendered = [UInt8]()
    for input in inputs.isEmpty ? ["-"] : inputs {
      try withInput(input) { descriptor, size in
        let reader = LineReader(descriptor)
        var progress = ProgressBar(total: size ?? 0, label: label, streams)
        try reader.forEachLine { line, number, bytesRead in
          if number % 4096 == 0 { progress.update(bytesRead) }
          guard field != nil else {
            // Refused, never repaired: a repaired line would be written
            // back with other bytes (JSON lines are checked by the scanner).
            guard UTF8Check.isValid(line) else {
              throw CLIError.malformedInput(line: number, reason: "not valid UTF-8; nothing was changed")
            }
            switch try transform(line, context, number, input) {
            case .unchanged: try output?.append(line)
            case .replaced(let text): try Self.appendText(text, to: output)
            }
            output?.append(UInt8(ascii: "\n"))
            return
          }
          let members: [JSONLine.Member]
          do {
            members = try JSONLine.members(of: line, named: names)
          } catch let error as JSONLine.Malformed {
            throw CLIError.malformedInput(line: number, reason: error.reason)
          }
          var lineContext = context
          if contextField != nil {
            guard case .string(let found, _) = members[1] else {
              throw CLIError.malformedInput(line: number, reason: "field '\(contextField!)' is not a string")
            }
            lineContext = found
          }
          switch members[0] {
          case .missing, .null:
            _ = try transform(nil, lineContext, number, input)
            try output?.append(line)
          case .other:
            throw CLIError.malformedInput(line: number, reason: "field '\(field!)' is not a string")
          case .string(let value, let token):
            var value = value
            let outcome = try value.withUTF8 { try transform(UnsafeRawBufferPointer($0), lineContext, number, input) }
            switch outcome {
            case .unchanged: try output?.append(line)
            case .replaced(let text):
              rendered.removeAll(keepingCapacity: true)
              JSONLine.encode(text, into: &rendered)
              try output?.append(UnsafeRawBufferPointer(rebasing: line[..<token.lowerBound]))
              try rendered.withUnsafeBytes { try output?.append($0) }
              try output?.append(UnsafeRawBufferPointer(rebasing: line[token.upperBound...]))
            }
          }
          output?.append(UInt8(ascii: "\n"))
        }
        progress.update(size ?? 0)
      }
    }
  }

  private static func appendText(_ text: String, to output: BatchOutput?) throws {
    var text = text
    try text.withUTF8 { try output?.append(UnsafeRawBufferPointer($0)) }
  }
}

/// Draws `[####      ] 42%` on standard error when it is a terminal (and
/// not `-q`) and the input's size is known, and nothing otherwise.
struct ProgressBar {
  let total: Int
  let label: String
  let streams: StandardStreams
  private var shown = -1

  init(total: Int, label: String, _ streams: StandardStreams) {
    self.total = total
    self.label = label
    self.streams = streams
  }

  mutating func update(_ done: Int) {
    guard total > 0 else { return }
    let percent = min(done, total) * 100 / total
    guard percent != shown else { return }
    shown = percent
    let filled = percent * 30 / 100
    let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
    streams.progress("\(label) [\(bar)] \(percent)%", done: percent == 100)
  }
}
