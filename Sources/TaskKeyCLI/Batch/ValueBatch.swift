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

  static let help = """
      --context C       The context of every value (default: empty).
    \(fieldHelp)
    """

  static let fieldHelp = """
      --field F         Input is JSON lines; the value is the string in field
                        F of each object (null or missing: left alone).
      --context-field G With --field: each value's context is the string in
                        field G of its object (for example "note/<id>/body").
    """

  static let streamHelp = """
      --input F         Read the values from F (default: standard input).
      --out F           Write the result to F, replacing it all or nothing
                        (a temporary file beside F, renamed at the end), in
                        constant memory. F may be the input itself. Without
                        it the result goes to standard output once every
                        value has been processed, so it is held in memory.
    """

  /// Reads the options; `severalInputs` allows `--input` more than once.
  init(parsing arguments: inout Arguments, severalInputs: Bool = false, output allowsOutput: Bool = true) throws {
    field = try arguments.option("--field")
    contextField = try arguments.option("--context-field")
    let fixed = try arguments.option("--context")
    if contextField != nil && field == nil { throw arguments.usageError("--context-field needs --field") }
    if contextField != nil && fixed != nil { throw arguments.usageError("give --context or --context-field, not both") }
    context = fixed ?? ""
    inputs = severalInputs ? try arguments.options("--input") : (try arguments.option("--input")).map { [$0] } ?? []
    output = allowsOutput ? try arguments.option("--out") : nil
    if inputs.filter({ $0 == "-" }).count > 1 { throw arguments.usageError("standard input ('-') can be read once") }
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
  ///   throws, or an I/O error; then nothing is written.
  func run(
    to output: BatchOutput?, progress label: String,
    _ transform: (_ value: UnsafeRawBufferPointer?, _ context: String, _ line: Int, _ input: String) throws -> Outcome
  ) throws {
    let names = [field, contextField].compactMap { $0 }.map { Array($0.utf8) }
    var rendered = [UInt8]()
    for input in inputs.isEmpty ? ["-"] : inputs {
      try withInput(input) { descriptor, size in
        var reader = LineReader(descriptor)
        var progress = ProgressBar(total: size ?? 0, label: label)
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

/// Draws `[####      ] 42%` on standard error when it is a terminal and the
/// input's size is known, and nothing otherwise.
struct ProgressBar {
  let total: Int
  let label: String
  let enabled: Bool
  private var shown = -1

  init(total: Int, label: String) {
    self.total = total
    self.label = label
    self.enabled = total > 0 && standardErrorIsTerminal()
  }

  mutating func update(_ done: Int) {
    guard enabled else { return }
    let percent = min(done, total) * 100 / total
    guard percent != shown else { return }
    shown = percent
    let filled = percent * 30 / 100
    let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
    writeToStandardError("\r\(label) [\(bar)] \(percent)%" + (percent == 100 ? "\n" : ""))
  }
}
