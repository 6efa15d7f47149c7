import TaskCrypto

/// Whether new attachments are sealed: off by default.
///
/// Turning it on is safe at any time: files stored before stay plain and
/// still open (a plain file passes through `open` unchanged), files stored
/// after are sealed. Turning it off again leaves sealed files sealed.
///
/// Stored as one line in a file: `seal-new-attachments=on` or
/// `seal-new-attachments=off`, with a final newline; a missing file means
/// off, anything else is refused.
public struct AttachmentSettings: Equatable, Sendable {
  /// Whether `store` seals new attachments.
  public var sealsNewAttachments: Bool

  /// The default: new attachments are stored plain.
  public init(sealsNewAttachments: Bool = false) {
    self.sealsNewAttachments = sealsNewAttachments
  }

  /// The file name inside the key directory.
  public static let fileName = "attachment-settings"

  /// The file's exact bytes for this setting.
  public var fileContents: [UInt8] {
    Array("seal-new-attachments=\(sealsNewAttachments ? "on" : "off")\n".utf8)
  }

  /// Parses the settings file's bytes.
  ///
  /// - Throws: `AttachmentError.malformedSettings` for anything but the two
  ///   lines.
  public init(fileContents: [UInt8], path: String) throws {
    switch fileContents {
    case Array("seal-new-attachments=on\n".utf8): sealsNewAttachments = true
    case Array("seal-new-attachments=off\n".utf8): sealsNewAttachments = false
    default: throw AttachmentError.malformedSettings(path: path)
    }
  }
}

extension AttachmentSettings {
  /// Reads the setting from `directory` (the key directory): off when the
  /// file does not exist.
  ///
  /// - Throws: `AttachmentError.malformedSettings` for any other content,
  ///   `.system` when the file cannot be read.
  public static func load(fromDirectory directory: String) throws -> AttachmentSettings {
    let path = directory + "/" + fileName
    guard SystemIO.exists(path) else { return AttachmentSettings() }
    let input = try SystemIO.openForReading(path)
    let fd = input.descriptor.rawValue
    defer { withExtendedLifetime(input) {} }
    // One byte more than the longer line, so anything longer is refused.
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 26, alignment: 1)
    defer { buffer.deallocate() }
    let contents = try Attachment.readFully(
      { try SystemIO.read(fd, into: $0, name: path) }, count: buffer.count, buffer: buffer)
    return try AttachmentSettings(fileContents: contents, path: path)
  }

  /// Writes the setting into `directory` durably: a temporary file beside
  /// it, flushed, renamed over the old one, and the directory flushed.
  ///
  /// - Throws: `AttachmentError.system`.
  public func save(toDirectory directory: String) throws {
    let path = directory + "/" + Self.fileName
    let bytes = fileContents
    _ = try Attachment.transform(descriptor: -1, name: path, to: path, replacing: true) { _, write in
      try bytes.withUnsafeBytes { try write($0) }
      return Attachment.Summary(isSealed: false, keyID: nil, plaintextByteCount: 0, storedByteCount: 0)
    }
  }
}

extension Attachment {
  /// Stores a new attachment as the settings say: sealed under the
  /// keyring's primary key when `settings.sealsNewAttachments`, else copied
  /// plain. A source that itself begins with the magic is sealed either
  /// way, so that it can never be mistaken for a sealed attachment. The
  /// file appears under `destination` only whole.
  ///
  /// - Returns: what was stored.
  /// - Throws: as `seal(file:to:using:record:progress:)`.
  public static func store(
    file source: String, to destination: String, using keyring: Keyring, record: String,
    settings: AttachmentSettings, progress: Progress? = nil
  ) throws -> Summary {
    if try settings.sealsNewAttachments || startsWithMagic(source) {
      return try seal(file: source, to: destination, using: keyring, record: record, progress: progress)
    }
    // Opening a file without the magic copies it unchanged.
    return try open(file: source, to: destination, using: keyring, record: record, progress: progress)
  }

  /// Whether the file at `path` begins with the magic.
  static func startsWithMagic(_ path: String) throws -> Bool {
    let input = try SystemIO.openForReading(path)
    let fd = input.descriptor.rawValue
    defer { withExtendedLifetime(input) {} }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: magic.count, alignment: 1)
    defer { buffer.deallocate() }
    return isSealed(
      prefix: try readFully({ try SystemIO.read(fd, into: $0, name: path) }, count: magic.count, buffer: buffer))
  }
}
