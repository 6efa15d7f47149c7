import TaskCrypto

/// `taskkey seal`: seals standard input into a `tc1.` value.
struct SealCommand: Command {
  static let spec = CommandSpec(
    name: "seal", abstract: "Seal text from standard input into a tc1 value with AES-256-GCM.",
    options: NoteOptions.options,
    example: """
      # Seal a note body for record 42 with the vault's primary note key:
      echo 'buy milk' | taskkey seal -c note/42/body
      """)

  let note: NoteOptions

  init(_ arguments: ParsedArguments) throws {
    note = try NoteOptions(arguments)
  }

  func run(_ streams: StandardStreams) throws {
    let key = try note.keyring(streams).primary
    let plaintext = try note.readInput(streams, limit: SealedValue.maximumPlaintextByteCount)
    try streams.print(try SealedValue.seal(bytes: plaintext, using: key, context: note.context))
  }
}
