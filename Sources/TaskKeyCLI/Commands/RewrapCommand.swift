import CommandKit
import TaskCrypto

/// `taskkey rewrap`: re-seals values under the primary note key.
struct RewrapCommand: Command {
  static let sealPlainOption = OptionSpec.flag(
    "--seal-plain", help: "Also seal plain values (default: they pass through).")

  static let spec = CommandSpec(
    name: "rewrap", abstract: "Re-seal values from standard input under the primary note key, after a rotate.",
    options: [ValueBatch.contextOption] + ValueBatch.streamOptions + [sealPlainOption],
    json: JSONShape(
      fields: ["primary", "resealed", "sealed", "current", "plain"],
      help: "{primary, resealed (under the primary), sealed (were plain), current (already under the primary), "
        + "plain (passed through)} (with --out only)."),
    discussion: """
      Values already under the primary key are written back unchanged. All or
      nothing: if any value does not open, nothing is written and the line is named.
      Lines stream through: with --out, memory stays flat however long the input.
      JSON lines are written back byte for byte except the value. A progress bar is
      drawn on standard error when it is a terminal and the input is a file; the
      counts follow there.
      """,
    example: """
      # After 'taskkey rotate', move every note body to the new key:
      taskkey rewrap --field body --context-field ctx -i notes.jsonl -o notes.jsonl
      """)

  let batch: ValueBatch
  let sealPlain: Bool
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    batch = try ValueBatch(arguments)
    sealPlain = arguments.flag(Self.sealPlainOption)
    json = try batch.jsonReport(arguments)
  }

  struct Report: Encodable {
    let primary: String
    let resealed, sealed, current, plain: Int
  }

  func run(_ streams: StandardStreams) throws {
    let keyring = try openVault(streams).noteKeyring()
    let output = try BatchOutput(path: batch.output, streams: streams)
    var (resealed, sealed, current, plain) = (0, 0, 0, 0)
    try batch.run(to: output, progress: "rewrap", streams) { value, context, _, _ in
      guard let value else { return .unchanged }
      let text = String(decoding: value, as: UTF8.self)
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
    }
    try output.commit()
    if json {
      return try streams.printJSON(
        Report(primary: keyring.primaryID.hex, resealed: resealed, sealed: sealed, current: current, plain: plain))
    }
    streams.note(
      "rewrap: \(resealed) re-sealed under \(keyring.primaryID), \(sealed) sealed (were plain), "
        + "\(current) already current, \(plain) plain passed through")
  }
}
