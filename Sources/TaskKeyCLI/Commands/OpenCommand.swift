import CommandKit
import TaskCrypto

/// `taskkey open`: opens a `tc1.` value, or passes a plain value through.
struct OpenCommand: NoteValueCommand {
  static let spec = CommandSpec(
    name: "open", abstract: "Open a sealed value from standard input; plain values pass through unchanged.",
    options: NoteOptions.batchOptions,
    json: JSONShape(
      fields: ["opened", "plain"], help: "{opened, plain (passed through)} (with --field and --out only)."),
    discussion: """
      With --field, every sealed value in field F is opened; plain values pass
      through. All or nothing: one value that does not open (or is not UTF-8 text)
      writes nothing and names its line.
      """,
    example: """
      # Open what 'seal' made; a tampered value exits 10 and prints nothing:
      taskkey open -c note/42/body < sealed.txt
      # Open every note body of a sealed export:
      taskkey open --field body --context-field ctx -i sealed.jsonl -o notes.jsonl
      """)

  let note: NoteOptions
  let batch: ValueBatch?
  let json: Bool

  struct Report: Encodable {
    let opened, plain: Int
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
    guard SealedValue.isSealed(text) else { return try note.writeOutput(streams, input) }
    let keyring = try fileKeyring ?? note.keyring(streams)
    try note.writeOutput(streams, try SealedValue.openBytes(text, using: keyring, context: note.context))
  }

  private func openBatch(_ batch: ValueBatch, _ streams: StandardStreams) throws {
    let keyring = try note.keyring(streams)
    let output = try BatchOutput(path: batch.output, streams: streams)
    var opened = 0
    var plain = 0
    try batch.run(to: output, progress: "open", streams) { value, context, _, _ in
      guard let value else { return .unchanged }
      let text = String(decoding: value, as: UTF8.self)
      guard SealedValue.isSealed(text) else {
        plain += 1
        return .unchanged
      }
      opened += 1
      return .replaced(try SealedValue.open(text, using: keyring, context: context))
    }
    try output.commit()
    if json { return try streams.printJSON(Report(opened: opened, plain: plain)) }
    streams.note("open: \(opened) opened, \(plain) plain passed through")
  }
}
