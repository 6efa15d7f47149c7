import TaskCrypto

/// `taskkey rewrap`: re-seals values under the primary note key.
struct RewrapCommand: Command {
  static let sealPlainOption = OptionSpec.flag(
    "--seal-plain", help: "Also seal plain values (default: they pass through).")

  static let spec = CommandSpec(
    name: "rewrap", abstract: "Re-seal values from standard input under the primary note key, after a rotate.",
    options: ValueBatch.options + [sealPlainOption],
    discussion: """
      Values already under the primary key are written back unchanged. All or
      nothing: if any value does not open, nothing is written to standard output and
      the line is named. JSON lines are written back with sorted keys. A progress bar
      is drawn on standard error when it is a terminal; the counts follow there.
      """,
    example: """
      # After 'taskkey rotate', move every note body to the new key:
      taskkey rewrap --field body --context-field ctx < notes.jsonl > notes.new.jsonl
      """)

  let batch: ValueBatch
  let sealPlain: Bool

  init(_ arguments: ParsedArguments) throws {
    batch = try ValueBatch(arguments)
    sealPlain = arguments.flag(Self.sealPlainOption)
  }

  func run(_ streams: StandardStreams) throws {
    let keyring = try openVault(streams).noteKeyring()
    let lines = try batch.lines(of: streams.readAll(limit: ValueBatch.byteLimit))
    var output = [String]()
    output.reserveCapacity(lines.count)
    var (moved, sealed, current, plain) = (0, 0, 0, 0)
    var progress = ProgressBar(total: lines.count, label: "rewrap")
    for line in lines {
      defer { progress.update(line.number, streams) }
      guard let value = line.value else {
        output.append(line.raw)
        continue
      }
      let result: (value: String, changed: Bool)
      do {
        result = try SealedValue.reseal(value, using: keyring, context: line.context, sealingPlain: sealPlain)
      } catch let error as TaskCryptoError {
        throw CLIError.valueRefused(line: line.number, error)
      }
      switch (SealedValue.isSealed(value), result.changed) {
      case (false, true): sealed += 1
      case (false, false): plain += 1
      case (true, true): moved += 1
      case (true, false): current += 1
      }
      output.append(result.changed ? try batch.render(line, newValue: result.value) : line.raw)
    }
    try streams.write(Array(output.map { $0 + "\n" }.joined().utf8))
    streams.note(
      "rewrap: \(moved) re-sealed under \(keyring.primaryID), \(sealed) plain sealed, \(current) already current, "
        + "\(plain) plain passed through")
  }
}
