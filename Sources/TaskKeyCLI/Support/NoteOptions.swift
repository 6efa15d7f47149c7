import CommandKit
import TaskCrypto
import TaskVault

/// The options that seal and open share.
struct NoteOptions {
  static let contextOption = OptionSpec.value(
    "--context", short: "c", "C",
    help: "Where the value lives, e.g. note/<id>/body; opening needs the same context (default: empty).")
  static let keyFileOption = OptionSpec.value(
    "--key-file", short: "k", "F", .file,
    help: "A key file '<8 hex kid>:<64 hex key>', mode 0600 (make one with 'taskkey keygen'). Without it the "
      + "unlocked vault's note keyring is used.")
  static let exactOption = OptionSpec.flag(
    "--exact",
    help: "Plaintext byte for byte: seal takes standard input as it is, open adds no newline. By default one "
      + "trailing newline is removed from the plaintext read and one is added to the plaintext written.")
  static let options = [contextOption, keyFileOption, exactOption]
  /// seal's and open's options: one value, or JSON lines with `--field`.
  static let batchOptions = options + ValueBatch.streamOptions

  /// The JSON-lines batch of seal and open, or nil for one value:
  /// `--field` switches to batch mode, where `--context` is the batch's.
  ///
  /// - Throws: a usage error for batch options without `--field`, or
  ///   `--exact` with it.
  static func batch(_ arguments: ParsedArguments) throws -> ValueBatch? {
    let batch = try ValueBatch(arguments)
    guard batch.field != nil else {
      if !batch.inputs.isEmpty || batch.output != nil {
        throw arguments.usageError("--input and --out work with --field (JSON lines)")
      }
      return nil
    }
    if arguments.flag(exactOption) {
      throw arguments.usageError("--exact is for one value; JSON lines carry exact strings")
    }
    return batch
  }

  /// `--json` of seal and open: the counts of a `--field` batch written to
  /// `--out F`.
  ///
  /// - Throws: a usage error for `--json` without `--field` and `--out F`.
  static func jsonReport(_ arguments: ParsedArguments, _ batch: ValueBatch?) throws -> Bool {
    guard let batch else {
      if arguments.flag(CommandSpec.jsonOption) { throw arguments.usageError("--json works with --field and --out F") }
      return false
    }
    return try batch.jsonReport(arguments)
  }

  let context: String
  let keyFile: String?
  let exact: Bool

  init(_ arguments: ParsedArguments) throws {
    context = arguments.value(Self.contextOption) ?? ""
    keyFile = arguments.value(Self.keyFileOption)
    try refuseStandardStream(keyFile, option: Self.keyFileOption, arguments)
    exact = arguments.flag(Self.exactOption)
  }

  /// The keyring that seals and opens: the key file's one key when
  /// `--key-file` is given, else the unlocked vault's note keyring.
  ///
  /// - Throws: key-file errors, `TaskVaultError`.
  func keyring(_ streams: StandardStreams) throws -> Keyring {
    if let keyFile { return Keyring(primary: try KeyFile.read(path: keyFile)) }
    return try openVault(streams).noteKeyring()
  }

  /// Standard input with one trailing newline removed unless `--exact`.
  func readInput(_ streams: StandardStreams, limit: Int) throws -> [UInt8] {
    var input = try streams.readAll(limit: limit + 1)
    if !exact && input.last == UInt8(ascii: "\n") { input.removeLast() }
    guard input.count <= limit else { throw InputTooLarge(source: "the input", limit: limit) }
    return input
  }

  /// Writes plaintext, with a newline unless `--exact`.
  func writeOutput(_ streams: StandardStreams, _ bytes: [UInt8]) throws {
    try streams.write(exact ? bytes : bytes + [UInt8(ascii: "\n")])
  }
}

/// `seal` and `open`: one value, or with `--field` a JSON-lines batch; both
/// read their options the same way.
protocol NoteValueCommand: Command {
  /// Made from the parsed note options, batch and `--json`.
  init(note: NoteOptions, batch: ValueBatch?, json: Bool)
}

extension NoteValueCommand {
  init(_ arguments: ParsedArguments) throws {
    let note = try NoteOptions(arguments)
    let batch = try NoteOptions.batch(arguments)
    self.init(note: note, batch: batch, json: try NoteOptions.jsonReport(arguments, batch))
  }
}
