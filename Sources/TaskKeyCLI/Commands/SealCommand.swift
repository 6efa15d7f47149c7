import TaskCrypto

/// The options that seal and open share.
struct NoteOptions {
  var context: String
  var keyFile: String?
  var exact: Bool

  static let help = """
    OPTIONS:
      --context C       Where the value lives, e.g. note/<id>/body; opening needs
                        the same context (default: empty).
      --key-file F      A key file '<8 hex kid>:<64 hex key>', mode 0600
                        (make one with 'taskkey keygen'). Without it the
                        unlocked vault's note keyring is used.
      --exact           Plaintext byte for byte: seal takes standard input
                        as it is, open adds no newline. By default one
                        trailing newline is removed from the plaintext read
                        and one is added to the plaintext written.
      -h, --help        Show this help.
    """

  init(parsing arguments: inout Arguments) throws {
    context = try arguments.option("--context") ?? ""
    exact = try arguments.flag("--exact")
    keyFile = try arguments.option("--key-file")
    if let keyFile { try refuseStandardStream(keyFile, option: "--key-file", arguments) }
    try arguments.finish()
  }

  /// Options for seal and open, with the JSON-lines batch options:
  /// `--field` switches to batch mode, where `--context` is the batch's.
  static func parse(_ arguments: inout Arguments) throws -> (NoteOptions, ValueBatch?) {
    let batch = try ValueBatch(parsing: &arguments)
    var note = try NoteOptions(parsing: &arguments)
    guard batch.field != nil else {
      if !batch.inputs.isEmpty || batch.output != nil {
        throw arguments.usageError("--input and --out work with --field (JSON lines)")
      }
      note.context = batch.context
      return (note, nil)
    }
    if note.exact { throw arguments.usageError("--exact is for one value; JSON lines carry exact strings") }
    return (note, batch)
  }

  static let batchHelp = """


    JSON LINES (--field; --context then applies to every value):
    \(ValueBatch.fieldHelp)
    \(ValueBatch.streamHelp)
    """

  /// Standard input with one trailing newline removed unless `--exact`.
  func readInput(_ streams: StandardStreams, limit: Int) throws -> [UInt8] {
    var input = try streams.readInput(limit + 1)
    if !exact && input.last == UInt8(ascii: "\n") { input.removeLast() }
    guard input.count <= limit else { throw CLIError.inputTooLarge(limit: limit) }
    return input
  }

  func writeOutput(_ streams: StandardStreams, _ bytes: [UInt8]) throws {
    try streams.writeOutput(exact ? bytes : bytes + [UInt8(ascii: "\n")])
  }
}

/// `taskkey seal`: seals standard input into a `tc1.` value.
struct SealCommand: Command {
  static let name = "seal"
  static let abstract = "Seal text from standard input into a tc1 value with AES-256-GCM."
  static let usage =
    "taskkey seal [--key-file F] [--context C] [--exact] | --field F [--context C | --context-field G] [--input F] [--out F]"
  static let options =
    NoteOptions.help + NoteOptions.batchHelp + """


      With --field, every plain value in field F is sealed; values already
      sealed are left as they are. All or nothing, streaming, as rewrap.
      """
  static let example = """
      # Seal a note body for record 42:
      echo 'buy milk' | taskkey seal --key-file note.key --context note/42/body
      # Seal every note body of an export, each under its own context:
      taskkey seal --field body --context-field ctx --input notes.jsonl --out sealed.jsonl
    """

  let note: NoteOptions
  let batch: ValueBatch?

  init(parsing arguments: inout Arguments) throws {
    (note, batch) = try NoteOptions.parse(&arguments)
  }

  func run(_ streams: StandardStreams) throws {
    if let batch { return try sealBatch(batch, streams) }
    let key = try note.keyring(streams).primary
    let plaintext = try note.readInput(streams, limit: SealedValue.maximumPlaintextByteCount)
    let sealed = try cryptoCall { try SealedValue.seal(bytes: plaintext, using: key, context: note.context) }
    try streams.print(sealed)
  }

  private func sealBatch(_ batch: ValueBatch, _ streams: StandardStreams) throws {
    let key = try note.keyring(streams).primary
    let output = try BatchOutput(path: batch.output, streams: streams)
    var sealed = 0
    var already = 0
    try batch.run(to: output, progress: "seal") { value, context, line, _ in
      guard let value else { return .unchanged }
      guard !SealedValue.isSealed(String(decoding: value, as: UTF8.self)) else {
        already += 1
        return .unchanged
      }
      sealed += 1
      do {
        return .replaced(try SealedValue.seal(bytes: value, using: key, context: context))
      } catch let error as TaskCryptoError {
        throw CLIError.valueRefused(line: line, error)
      }
    }
    try output.commit()
    streams.printError("seal: \(sealed) sealed under \(key.id), \(already) already sealed (left as they were)")
  }
}

/// `taskkey open`: opens a `tc1.` value, or passes a plain value through.
struct OpenCommand: Command {
  static let name = "open"
  static let abstract = "Open a sealed value from standard input; plain values pass through unchanged."
  static let usage =
    "taskkey open [--key-file F] [--context C] [--exact] | --field F [--context C | --context-field G] [--input F] [--out F]"
  static let options =
    NoteOptions.help + NoteOptions.batchHelp + """


      With --field, every sealed value in field F is opened; plain values pass
      through. All or nothing: one value that does not open (or is not UTF-8
      text) writes nothing and names its line.
      """
  static let example = """
      # Open what 'seal' made; a tampered value exits 10 and prints nothing:
      taskkey open --key-file note.key --context note/42/body < sealed.txt
      # Open every note body of a sealed export:
      taskkey open --field body --context-field ctx --input sealed.jsonl --out notes.jsonl
    """

  let note: NoteOptions
  let batch: ValueBatch?

  init(parsing arguments: inout Arguments) throws {
    (note, batch) = try NoteOptions.parse(&arguments)
  }

  func run(_ streams: StandardStreams) throws {
    if let batch { return try openBatch(batch, streams) }
    // A key file is read and checked whatever the input turns out to be, so
    // a missing, loose or malformed one is never hidden by a plain value
    // (docs/formats/key-file.md). The vault is consulted only for a sealed
    // value, so plain notes still open while it is locked.
    let fileKeyring = note.keyFile == nil ? nil : try note.keyring(streams)
    // One more byte than the longest value: the newline seal writes after it.
    let input = try note.readInput(streams, limit: SealedValue.maximumSealedByteCount + 1)
    // A sealed value never ends in white space, so its one trailing newline
    // goes even with --exact; a plain value is written back as it came.
    let value = input.last == UInt8(ascii: "\n") ? Array(input.dropLast()) : input
    // The marker is ASCII, so decoding with replacement cannot create or hide one.
    let text = String(decoding: value, as: UTF8.self)
    guard SealedValue.isSealed(text) else {
      try note.writeOutput(streams, input)
      return
    }
    let keyring = try fileKeyring ?? note.keyring(streams)
    let plaintext = try cryptoCall {
      try SealedValue.openBytes(text, using: keyring, context: note.context)
    }
    try note.writeOutput(streams, plaintext)
  }

  private func openBatch(_ batch: ValueBatch, _ streams: StandardStreams) throws {
    let keyring = try note.keyring(streams)
    let output = try BatchOutput(path: batch.output, streams: streams)
    var opened = 0
    var plain = 0
    try batch.run(to: output, progress: "open") { value, context, line, _ in
      guard let value else { return .unchanged }
      let text = String(decoding: value, as: UTF8.self)
      guard SealedValue.isSealed(text) else {
        plain += 1
        return .unchanged
      }
      opened += 1
      do {
        return .replaced(try SealedValue.open(text, using: keyring, context: context))
      } catch let error as TaskCryptoError {
        throw CLIError.valueRefused(line: line, error)
      }
    }
    try output.commit()
    streams.printError("open: \(opened) opened, \(plain) plain passed through")
  }
}

/// `taskkey keygen`: writes a new random key file.
struct KeygenCommand: Command {
  static let name = "keygen"
  static let abstract = "Make a new random note key and write it to a new 0600 key file."
  static let usage = "taskkey keygen --out F"
  static let options = """
    OPTIONS:
      --out F           The key file to create; an existing file is never replaced.
      -h, --help        Show this help.
    """
  static let example = """
      # Make a key for scripts and audits; prints the key id:
      taskkey keygen --out note.key
    """

  let path: String

  init(parsing arguments: inout Arguments) throws {
    guard let path = try arguments.option("--out") else { throw arguments.usageError("missing --out F") }
    try refuseStandardStream(path, option: "--out", arguments)
    self.path = path
    try arguments.finish()
  }

  func run(_ streams: StandardStreams) throws {
    let key = try cryptoCall { try NoteKey.generate() }
    try KeyFile.create(path: path, key: key)
    try streams.print(key.id.hex)
  }
}

/// Runs a TaskCrypto call, mapping its error into the CLI's.
func cryptoCall<T>(_ body: () throws -> T) throws -> T {
  do {
    return try body()
  } catch let error as TaskCryptoError {
    throw CLIError.crypto(error)
  }
}
