import Foundation
import TaskAttachments
import TaskCrypto
import TaskSystem

/// `taskkey attach seal|open|rewrap`: attachment files sealed with C2SP
/// chunked encryption inside the TaskKey wrapper (docs/formats/attachment.md).
struct AttachCommand: Command {
  static let name = "attach"
  static let abstract = "Seal, open or rewrap attachment files (streaming AES-256-GCM, C2SP chunked encryption)."
  static let usage =
    "taskkey attach seal|open|store [IN] [-o OUT] --record R [--key-file F] [--range OFFSET:LENGTH] [--json] "
    + "| rewrap FILE --record R [--json] | setting [on|off]"
  static let options = """
    SUBCOMMANDS:
      seal [IN]         Seal IN (default: standard input) under the note
                        keyring's primary key.
      open [IN]         Open IN (default: standard input). A sealed file is
                        verified chunk by chunk; a plain file (no magic) is
                        copied unchanged.
      rewrap FILE       Re-seal FILE in place under the primary key, after a
                        rotation; the file is replaced only when whole.
      store IN -o OUT   Store a new attachment as the setting says: sealed
                        when it is on, copied plain when it is off (the
                        default). A file that itself begins with the
                        attachment magic is sealed either way.
      setting [on|off]  Show or change whether new attachments are sealed
                        (the file attachment-settings in the vault
                        directory; off when absent).

    OPTIONS:
      --record R        The record the attachment belongs to, e.g.
                        attachment/42; opening needs the same record.
      -o, --out OUT     Write to a new file OUT (default: standard output).
                        OUT appears only whole: written to a temporary file
                        beside it and renamed after the last chunk verified.
                        An existing OUT is never replaced.
      --range OFFSET:LENGTH
                        (open) Write only LENGTH bytes from plaintext offset
                        OFFSET, decrypting only the chunks they lie in. IN
                        must be a regular file.
      --key-file F      A key file '<8 hex kid>:<64 hex key>', mode 0600.
                        Without it the unlocked vault's note keyring is used.
      --json            Print a JSON report {"sealed", "key_id",
                        "plaintext_bytes", "stored_bytes", "output"} on
                        standard output; needs -o (seal, open).
      -h, --help        Show this help.

    Progress is shown on standard error when it is a terminal and the input
    is over 4 MiB. Streaming to standard output may write a verified prefix
    before a later chunk fails: use -o to get all or nothing.
    """
  static let example = """
      # Seal a photo for attachment 42, then read 4 KiB from its middle:
      taskkey attach seal photo.jpg -o photo.jpg.tka --record attachment/42
      taskkey attach open photo.jpg.tka --record attachment/42 --range 1048576:4096 > part.bin
    """

  enum Action: Equatable {
    case seal
    case open(range: (offset: UInt64, length: UInt64)?)
    case rewrap
    case store
    case setting(Bool?)

    static func == (lhs: Action, rhs: Action) -> Bool {
      switch (lhs, rhs) {
      case (.seal, .seal), (.rewrap, .rewrap), (.store, .store): return true
      case (.setting(let left), .setting(let right)): return left == right
      case (.open(let left), .open(let right)): return left?.offset == right?.offset && left?.length == right?.length
      default: return false
      }
    }
  }

  let action: Action
  let input: String?
  let output: String?
  let record: String
  let keyFile: String?
  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    let out = try arguments.option("-o")
    let longOut = try arguments.option("--out")
    let record = try arguments.option("--record")
    keyFile = try arguments.option("--key-file")
    json = try arguments.flag("--json")
    let range = try arguments.option("--range")
    let words = try arguments.positionals()
    guard out == nil || longOut == nil else { throw arguments.usageError("give -o or --out, not both") }
    output = out ?? longOut
    switch (words.first, words.count) {
    case ("seal", 1...2): action = .seal
    case ("open", 1...2): action = .open(range: try range.map { try Self.parseRange($0, arguments) })
    case ("rewrap", 2): action = .rewrap
    case ("store", 2): action = .store
    case ("setting", 1): action = .setting(nil)
    case ("setting", 2) where words[1] == "on" || words[1] == "off": action = .setting(words[1] == "on")
    case (nil, _): throw arguments.usageError("missing subcommand: seal, open, store, rewrap or setting")
    default:
      throw arguments.usageError("expected 'seal [IN]', 'open [IN]', 'store IN', 'rewrap FILE' or 'setting [on|off]'")
    }
    if case .setting = action {
      guard record == nil, out == nil, longOut == nil, range == nil, keyFile == nil else {
        throw arguments.usageError("'setting' takes only on, off or nothing (and --json)")
      }
    } else if record == nil {
      throw arguments.usageError("missing --record R")
    }
    self.record = record ?? ""
    input = words.count == 2 && words[1] != "-" ? words[1] : nil
    if range != nil, action == .seal || action == .rewrap {
      throw arguments.usageError("--range goes with 'open' only")
    }
    if case .open(let range?) = action, input == nil {
      throw arguments.usageError("--range needs IN to be a file (random access), not standard input")
    }
    if action == .rewrap, output != nil { throw arguments.usageError("rewrap replaces FILE in place; drop -o") }
    if action == .store, output == nil { throw arguments.usageError("store needs -o OUT") }
    if range != nil, action == .store { throw arguments.usageError("--range goes with 'open' only") }
    if json, output == nil, action != .rewrap, !Self.isSetting(action) {
      throw arguments.usageError("--json prints the report on standard output, so the data needs -o OUT")
    }
    _ = range
    try arguments.finish()
  }

  static func isSetting(_ action: Action) -> Bool {
    if case .setting = action { return true }
    return false
  }

  /// Parses `OFFSET:LENGTH`, two decimal numbers.
  static func parseRange(_ text: String, _ arguments: Arguments) throws -> (offset: UInt64, length: UInt64) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let offset = UInt64(parts[0]), let length = UInt64(parts[1]), length <= Int.max else {
      throw arguments.usageError("--range takes OFFSET:LENGTH, two decimal byte counts, e.g. 4096:100")
    }
    return (offset, length)
  }

  func run(_ streams: StandardStreams) throws {
    if case .setting(let value) = action { return try setting(value, streams) }
    let keyring = try attachmentKeyring(streams)
    let progress = Progress(streams: streams, totalByteCount: input.flatMap(Self.size))
    let summary: Attachment.Summary
    do {
      switch action {
      case .seal:
        summary = try seal(keyring, progress: progress.report)
      case .open(let range?):
        summary = try read(range: range, keyring: keyring)
      case .open(nil):
        summary = try open(keyring, progress: progress.report)
      case .rewrap:
        summary = try Attachment.rewrap(file: input!, using: keyring, record: record, progress: progress.report)
      case .store:
        let settings = try AttachmentSettings.load(fromDirectory: try vaultDirectory(streams))
        summary = try Attachment.store(
          file: input!, to: output!, using: keyring, record: record, settings: settings, progress: progress.report)
      case .setting:
        preconditionFailure("handled above")
      }
    } catch let error as AttachmentError {
      progress.end()
      throw CLIError.attachment(error)
    }
    progress.end()
    if json { try report(summary, streams) }
  }

  /// `attach setting [on|off]`: shows or writes the setting.
  func setting(_ value: Bool?, _ streams: StandardStreams) throws {
    let directory = try vaultDirectory(streams)
    do {
      var settings = try AttachmentSettings.load(fromDirectory: directory)
      if let value {
        settings.sealsNewAttachments = value
        try settings.save(toDirectory: directory)
      }
      try streams.print(
        json
          ? "{\"seal_new_attachments\":\(settings.sealsNewAttachments)}"
          : "seal-new-attachments=\(settings.sealsNewAttachments ? "on" : "off")")
    } catch let error as AttachmentError {
      throw CLIError.attachment(error)
    }
  }

  func seal(_ keyring: Keyring, progress: Attachment.Progress?) throws -> Attachment.Summary {
    switch (input, output) {
    case (let input?, let output?):
      return try Attachment.seal(file: input, to: output, using: keyring, record: record, progress: progress)
    case (nil, let output?):
      return try Attachment.seal(fileDescriptor: 0, toFile: output, using: keyring, record: record, progress: progress)
    case (let input?, nil):
      let handle = try inputHandle(input)
      return try Attachment.seal(
        fileDescriptor: handle.fileDescriptor, to: 1, using: keyring, record: record, progress: progress)
    case (nil, nil):
      return try Attachment.seal(fileDescriptor: 0, to: 1, using: keyring, record: record, progress: progress)
    }
  }

  func open(_ keyring: Keyring, progress: Attachment.Progress?) throws -> Attachment.Summary {
    switch (input, output) {
    case (let input?, let output?):
      return try Attachment.open(file: input, to: output, using: keyring, record: record, progress: progress)
    case (nil, let output?):
      return try Attachment.open(fileDescriptor: 0, toFile: output, using: keyring, record: record, progress: progress)
    case (let input?, nil):
      let handle = try inputHandle(input)
      return try Attachment.open(
        fileDescriptor: handle.fileDescriptor, to: 1, using: keyring, record: record, progress: progress)
    case (nil, nil):
      return try Attachment.open(fileDescriptor: 0, to: 1, using: keyring, record: record, progress: progress)
    }
  }

  /// `open --range`: authenticates the length, then decrypts only the
  /// chunks the range touches, 1 MiB at a time.
  func read(range: (offset: UInt64, length: UInt64), keyring: Keyring) throws -> Attachment.Summary {
    let reader = try AttachmentReader(path: input!, keyring: keyring, record: record)
    if let output { return try reader.copy(offset: range.offset, length: range.length, toFile: output) }
    return try reader.copy(offset: range.offset, length: range.length, to: 1)
  }

  func inputHandle(_ path: String) throws -> FileHandle {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw CLIError.cannotOpen(path: path, reason: "no such file, or not readable")
    }
    return handle
  }

  static func size(_ path: String) -> UInt64? {
    (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? UInt64
  }

  func attachmentKeyring(_ streams: StandardStreams) throws -> Keyring {
    if let keyFile { return Keyring(primary: try KeyFile.read(path: keyFile)) }
    let vault = try openVault(streams)
    return try vaultCall { try vault.noteKeyring() }
  }

  func report(_ summary: Attachment.Summary, _ streams: StandardStreams) throws {
    struct Report: Encodable {
      let sealed: Bool
      let keyID: String?
      let plaintextBytes: UInt64
      let storedBytes: UInt64
      let output: String

      enum CodingKeys: String, CodingKey {
        case sealed
        case keyID = "key_id"
        case plaintextBytes = "plaintext_bytes"
        case storedBytes = "stored_bytes"
        case output
      }
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let value = Report(
      sealed: summary.isSealed, keyID: summary.keyID?.hex, plaintextBytes: summary.plaintextByteCount,
      storedBytes: summary.storedByteCount, output: output ?? input ?? "-")
    try streams.print(String(decoding: try encoder.encode(value), as: UTF8.self))
  }
}

extension CLIError {
  /// The exit code of each attachment error: the crypto codes for what the
  /// chunked encryption found, 12 for an unknown version, 65 for a
  /// truncated wrapper, a plain file given to rewrap or bad settings, 74
  /// for an existing destination, and the CLI's own codes for a file
  /// operation (66 when the input cannot be opened, 74 for a failed write).
  static func exitCode(for error: AttachmentError) -> ExitCode {
    switch error {
    case .crypto(let crypto): return CLIError.crypto(crypto).exitCode
    case .truncatedWrapper, .notSealed, .malformedSettings: return .dataError
    case .unsupportedVersion: return .unsupportedVersion
    case .destinationExists: return .ioError
    case .system(let error): return CLIError(error).exitCode
    }
  }
}

/// Progress on standard error, only when it is a terminal and the input is
/// over 4 MiB: one line rewritten in place, at most once per percent.
final class Progress {
  static let threshold: UInt64 = 4 << 20
  private let streams: StandardStreams
  private let total: UInt64?
  private var shown = -1
  let enabled: Bool

  init(streams: StandardStreams, totalByteCount: UInt64?) {
    self.streams = streams
    self.total = totalByteCount
    self.enabled = FileDescriptor.standardError.isTerminal && (totalByteCount ?? 0) > Self.threshold
  }

  var report: Attachment.Progress? {
    guard enabled, let total else { return nil }
    return { [self] done in
      let percent = Int(min(done, total) * 100 / max(total, 1))
      guard percent != shown else { return }
      shown = percent
      streams.writeError(Array("\rtaskkey: \(percent)% of \(total >> 20) MiB".utf8))
    }
  }

  func end() {
    if enabled && shown >= 0 { streams.writeError(Array("\n".utf8)) }
  }
}
