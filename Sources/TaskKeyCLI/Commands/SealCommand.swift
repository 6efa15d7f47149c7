import CommandKit
import TaskCrypto

/// `taskkey seal`: seals standard input into a `tc1.` value, or every plain
/// value of a JSON-lines field.
struct SealCommand: NoteValueCommand {
  static let spec = CommandSpec(
    name: "seal", abstract: "Seal text from standard input into a tc1 value with AES-256-GCM.",
    options: NoteOptions.batchOptions,
    json: JSONShape(
      fields: ["key_id", "sealed", "already_sealed"],
      help: "{key_id, sealed, already_sealed (left as they were)} (with --field and --out only)."),
    discussion: """
      With --field, every plain value in field F is sealed; values already sealed
      are left as they are. All or nothing, streaming, as rewrap; the counts go to
      standard error.
      """,
    example: """
      # Seal a note body for record 42 with the vault's primary note key:
      echo 'buy milk' | taskkey seal -c note/42/body
      # Seal every note body of an export, each under its own context:
      taskkey seal --field body --context-field ctx -i notes.jsonl -o sealed.jsonl
      """)

  let note: NoteOptions
  let batch: ValueBatch?
  let json: Bool

  struct Report: Encodable {
    let keyID: String
    let sealed, alreadySealed: Int
  }

  func run(_ streams: StandardStreams) throws {
    if let batch { return try sealBatch(batch, streams) }
    let key = try note.keyring(streams).primary
    let plaintext = try note.readInput(streams, limit: SealedValue.maximumPlaintextByteCount)
    try streams.print(try SealedValue.seal(bytes: plaintext, using: key, context: note.context))
  }

  private func sealBatch(_ batch: ValueBatch, _ streams: StandardStreams) throws {
    let key = try note.keyring(streams).primary
    let output = try BatchOutput(path: batch.output, streams: streams)
    var sealed = 0
    var already = 0
    try batch.run(to: output, progress: "seal", streams) { value, context, _, _ in
      guard let value else { return .unchanged }
      guard !SealedValue.isSealed(String(decoding: value, as: UTF8.self)) else {
        already += 1
        return .unchanged
      }
      sealed += 1
      return .replaced(try SealedValue.seal(bytes: value, using: key, context: context))
    }
    try output.commit()
    if json { return try streams.printJSON(Report(keyID: key.id.hex, sealed: sealed, alreadySealed: already)) }
    streams.note("seal: \(sealed) sealed under \(key.id), \(already) already sealed (left as they were)")
  }
}
