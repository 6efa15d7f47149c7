import CommandKit
import FoundationEssentials
import TaskAttachments
import TaskCrypto
import TaskSystem

/// `taskkey attach seal|open|rewrap`: attachment files sealed with C2SP
/// chunked encryption inside the TaskKey wrapper (docs/formats/attachment.md).
struct AttachCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "attach", abstract: "Seal, open or rewrap attachment files (streaming AES-256-GCM, C2SP chunked encryption).",
    discussion: """
      Progress is shown on standard error when it is a terminal and the input is
      over 4 MiB. Streaming to standard output may write a verified prefix before a
      later chunk fails: use -o to get all or nothing.
      """,
    example: """
      # Seal a photo for attachment 42, then read 4 KiB from its middle:
      taskkey attach seal photo.jpg -o photo.jpg.tka --record attachment/42
      taskkey attach open photo.jpg.tka --record attachment/42 --range 1048576:4096 > part.bin
      """)
  static let subcommands: [any CommandDeclaration.Type] = [
    AttachStreamCommand<AttachSeal>.self, AttachStreamCommand<AttachOpen>.self, AttachStoreCommand.self,
    AttachRewrapCommand.self, AttachSettingCommand.self,
  ]

  static let recordOption = OptionSpec.value(
    "--record", "R", help: "The record the attachment belongs to, e.g. attachment/42; opening needs the same record.",
    required: true)
  static let outOption = OptionSpec.value(
    "--out", short: "o", "OUT", .file,
    help: "Write to a new file OUT (default: standard output). OUT appears only whole: written to a temporary "
      + "file beside it and renamed after the last chunk verified. An existing OUT is never replaced (exit 73).")
  static let rangeOption = OptionSpec.value(
    "--range", "OFFSET:LENGTH",
    help: "Write only LENGTH bytes from plaintext offset OFFSET, decrypting only the chunks they lie in. IN must "
      + "be a regular file.")
  static let json = JSONShape(
    fields: ["sealed", "key_id", "plaintext_bytes", "stored_bytes", "output"],
    help: "{sealed, key_id, plaintext_bytes, stored_bytes, output}; needs -o (seal, open).")

  /// The keyring: the key file's one key, else the vault's note keyring.
  static func keyring(_ keyFile: String?, _ streams: StandardStreams) throws -> Keyring {
    if let keyFile { return Keyring(primary: try KeyFile.read(path: keyFile)) }
    return try openVault(streams).noteKeyring()
  }

  /// Prints the JSON report of a summary.
  static func report(_ summary: Attachment.Summary, output: String, _ streams: StandardStreams) throws {
    struct Report: Encodable {
      let sealed: Bool
      let keyId: String?
      let plaintextBytes: UInt64
      let storedBytes: UInt64
      let output: String
    }
    try streams.printJSON(
      Report(
        sealed: summary.isSealed, keyId: summary.keyID?.hex, plaintextBytes: summary.plaintextByteCount,
        storedBytes: summary.storedByteCount, output: output))
  }

  /// The size of a regular file, for progress.
  static func size(_ path: String) -> UInt64? {
    (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? UInt64
  }
}

/// `seal` or `open` of `attach`: what differs between the two.
protocol AttachDirection {
  static var name: String { get }
  static var abstract: String { get }
  static var hasRange: Bool { get }
  /// The library calls of this direction, by where input and output are.
  static var calls: AttachCalls { get }
}

/// The three `Attachment` calls of one direction: file to file, descriptor
/// to file, descriptor to descriptor.
struct AttachCalls {
  /// One call: input, output, keyring, record, progress.
  typealias Call<Input, Output> = (Input, Output, Keyring, String, Attachment.Progress?) throws -> Attachment.Summary
  let fileToFile: Call<String, String>
  let descriptorToFile: Call<Int32, String>
  let descriptorToDescriptor: Call<Int32, Int32>
}

extension AttachDirection {
  /// Runs the direction from `input` (a path, or nil: standard input) to
  /// `output` (a path, or nil: standard output).
  static func run(
    input: String?, output: String?, keyring: Keyring, record: String, progress: Attachment.Progress?,
    descriptors: (input: Int32, output: Int32)
  ) throws -> Attachment.Summary {
    switch (input, output) {
    case (let input?, let output?):
      return try calls.fileToFile(input, output, keyring, record, progress)
    case (nil, let output?):
      return try calls.descriptorToFile(descriptors.input, output, keyring, record, progress)
    case (let input?, nil):
      let file = try inputFile(input)
      return try withExtendedLifetime(file) {
        try calls.descriptorToDescriptor(file.descriptor.rawValue, descriptors.output, keyring, record, progress)
      }
    case (nil, nil):
      return try calls.descriptorToDescriptor(descriptors.input, descriptors.output, keyring, record, progress)
    }
  }
}

/// `attach seal [IN]`.
enum AttachSeal: AttachDirection {
  static let name = "seal"
  static let abstract = "Seal IN (default: standard input) under the note keyring's primary key."
  static let hasRange = false
  static let calls = AttachCalls(
    fileToFile: Attachment.seal(file:to:using:record:progress:),
    descriptorToFile: Attachment.seal(fileDescriptor:toFile:using:record:progress:),
    descriptorToDescriptor: Attachment.seal(fileDescriptor:to:using:record:progress:))
}

/// `attach open [IN]`.
enum AttachOpen: AttachDirection {
  static let name = "open"
  static let abstract =
    "Open IN (default: standard input): verified chunk by chunk; a plain file (no magic) is copied unchanged."
  static let hasRange = true
  static let calls = AttachCalls(
    fileToFile: Attachment.open(file:to:using:record:progress:),
    descriptorToFile: Attachment.open(fileDescriptor:toFile:using:record:progress:),
    descriptorToDescriptor: Attachment.open(fileDescriptor:to:using:record:progress:))
}

/// Opens an input file for streaming.
private func inputFile(_ path: String) throws -> OpenFile {
  do {
    return try OpenFile.reading(path)
  } catch {
    throw CLIError.cannotOpen(path: path, reason: "no such file, or not readable")
  }
}

/// What `attach seal`, `open`, `store` and `rewrap` share: the record, the
/// key file (else the vault's note keyring) and `--json`.
struct AttachOptions {
  let record: String
  let keyFile: String?
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    record = arguments.value(AttachCommand.recordOption)!
    keyFile = arguments.value(NoteOptions.keyFileOption)
    try refuseStandardStream(keyFile, option: NoteOptions.keyFileOption, arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }
}

/// `taskkey attach seal|open [IN]`.
struct AttachStreamCommand<Direction: AttachDirection>: Command {
  static var spec: CommandSpec {
    CommandSpec(
      name: Direction.name, abstract: Direction.abstract,
      arguments: [
        ArgumentSpec(name: "IN", kind: .file, help: "The input file ('-' or none: standard input).", optional: true)
      ],
      options: [AttachCommand.recordOption, AttachCommand.outOption, NoteOptions.keyFileOption]
        + (Direction.hasRange ? [AttachCommand.rangeOption] : []),
      json: AttachCommand.json,
      example: """
        taskkey attach \(Direction.name) photo.jpg\(Direction.name == "seal" ? "" : ".tka") -o out --record attachment/42
        """)
  }

  let input: String?
  let output: String?
  let common: AttachOptions
  let range: (offset: UInt64, length: UInt64)?

  init(_ arguments: ParsedArguments) throws {
    input = arguments.argument(0).flatMap { $0 == standardStreamPath ? nil : $0 }
    output = arguments.value(AttachCommand.outOption)
    common = try AttachOptions(arguments)
    if Direction.hasRange, let text = arguments.value(AttachCommand.rangeOption) {
      let parts = text.split(separator: ":", omittingEmptySubsequences: false)
      guard parts.count == 2, let offset = UInt64(parts[0]), let length = UInt64(parts[1]), length <= Int.max else {
        throw arguments.usageError("--range takes OFFSET:LENGTH, two decimal byte counts, e.g. 4096:100")
      }
      guard input != nil else {
        throw arguments.usageError("--range needs IN to be a file (random access), not standard input")
      }
      range = (offset, length)
    } else {
      range = nil
    }
    if common.json && output == nil {
      throw arguments.usageError("--json prints the report on standard output, so the data needs -o OUT")
    }
  }

  func run(_ streams: StandardStreams) throws {
    let keyring = try AttachCommand.keyring(common.keyFile, streams)
    let progress = AttachProgress(streams: streams, totalByteCount: input.flatMap(AttachCommand.size))
    defer { progress.end() }
    let summary: Attachment.Summary
    if let range, let input {
      // Authenticates the length, then decrypts only the chunks the range touches.
      let reader = try AttachmentReader(path: input, keyring: keyring, record: common.record)
      summary =
        try output.map { try reader.copy(offset: range.offset, length: range.length, toFile: $0) }
        ?? reader.copy(offset: range.offset, length: range.length, to: streams.descriptors.output)
    } else {
      summary = try Direction.run(
        input: input, output: output, keyring: keyring, record: common.record, progress: progress.report,
        descriptors: streams.descriptors)
    }
    if common.json { try AttachCommand.report(summary, output: output ?? input ?? "-", streams) }
  }
}

/// `taskkey attach rewrap FILE`.
struct AttachRewrapCommand: Command {
  static let spec = CommandSpec(
    name: "rewrap",
    abstract: "Re-seal FILE in place under the primary key, after a rotation; replaced only when whole.",
    arguments: [ArgumentSpec(name: "FILE", kind: .file, help: "The sealed attachment file.")],
    options: [AttachCommand.recordOption, NoteOptions.keyFileOption], json: AttachCommand.json,
    example: """
      taskkey attach rewrap photo.jpg.tka --record attachment/42
      """)

  let file: String
  let common: AttachOptions

  init(_ arguments: ParsedArguments) throws {
    file = arguments.argument(0)!
    common = try AttachOptions(arguments)
  }

  func run(_ streams: StandardStreams) throws {
    let keyring = try AttachCommand.keyring(common.keyFile, streams)
    let progress = AttachProgress(streams: streams, totalByteCount: AttachCommand.size(file))
    defer { progress.end() }
    let summary = try Attachment.rewrap(file: file, using: keyring, record: common.record, progress: progress.report)
    if common.json { try AttachCommand.report(summary, output: file, streams) }
  }
}

/// `taskkey attach store IN -o OUT`.
struct AttachStoreCommand: Command {
  static let spec = CommandSpec(
    name: "store",
    abstract: "Store a new attachment as the setting says: sealed when on, copied plain when off (the default).",
    arguments: [ArgumentSpec(name: "IN", kind: .file, help: "The new attachment.")],
    options: [AttachCommand.recordOption, AttachCommand.outOption.asRequired, NoteOptions.keyFileOption],
    json: AttachCommand.json,
    discussion: "A file that itself begins with the attachment magic is sealed either way.",
    example: """
      taskkey attach store photo.jpg -o attachments/7 --record attachment/7
      """)

  let input: String
  let output: String
  let common: AttachOptions

  init(_ arguments: ParsedArguments) throws {
    input = arguments.argument(0)!
    output = arguments.value(AttachCommand.outOption.asRequired)!
    common = try AttachOptions(arguments)
  }

  func run(_ streams: StandardStreams) throws {
    let keyring = try AttachCommand.keyring(common.keyFile, streams)
    let settings = try AttachmentSettings.load(fromDirectory: try vaultDirectory(streams))
    let progress = AttachProgress(streams: streams, totalByteCount: AttachCommand.size(input))
    defer { progress.end() }
    let summary = try Attachment.store(
      file: input, to: output, using: keyring, record: common.record, settings: settings, progress: progress.report)
    if common.json { try AttachCommand.report(summary, output: output, streams) }
  }
}

/// `taskkey attach setting [on|off]`.
struct AttachSettingCommand: Command {
  static let spec = CommandSpec(
    name: "setting", abstract: "Show or change whether new attachments are sealed (off when never set).",
    arguments: [
      ArgumentSpec(
        name: "VALUE", kind: .choice(["on", "off"]), help: "on or off; without it the setting is shown.",
        optional: true)
    ],
    json: JSONShape(fields: ["seal_new_attachments"], help: "{seal_new_attachments (bool)}."),
    discussion: "The setting is the file attachment-settings in the vault directory.",
    example: """
      taskkey attach setting on
      """)

  let value: Bool?
  let json: Bool

  init(_ arguments: ParsedArguments) {
    value = arguments.argument(0).map { $0 == "on" }
    json = arguments.flag(CommandSpec.jsonOption)
  }

  struct Report: Encodable {
    let sealNewAttachments: Bool
  }

  func run(_ streams: StandardStreams) throws {
    let directory = try vaultDirectory(streams)
    var settings = try AttachmentSettings.load(fromDirectory: directory)
    if let value {
      settings.sealsNewAttachments = value
      try settings.save(toDirectory: directory)
    }
    if json { return try streams.printJSON(Report(sealNewAttachments: settings.sealsNewAttachments)) }
    try streams.print("seal-new-attachments=\(settings.sealsNewAttachments ? "on" : "off")")
  }
}

/// Progress on standard error, only when it is a terminal and the input is
/// over 4 MiB: one line rewritten in place, at most once per percent.
final class AttachProgress {
  static let threshold: UInt64 = 4 << 20
  private let streams: StandardStreams
  private let total: UInt64?
  private var shown = -1
  let enabled: Bool

  init(streams: StandardStreams, totalByteCount: UInt64?) {
    self.streams = streams
    self.total = totalByteCount
    self.enabled = streams.errorIsTerminal && (totalByteCount ?? 0) > Self.threshold
  }

  var report: Attachment.Progress? {
    guard enabled, let total else { return nil }
    return { [self] done in
      let percent = Int(min(done, total) * 100 / max(total, 1))
      guard percent != shown else { return }
      shown = percent
      streams.progress("taskkey: \(percent)% of \(total >> 20) MiB", done: false)
    }
  }

  func end() {
    if enabled && shown >= 0 { streams.progress("", done: true) }
  }
}
