import TaskCrypto
import TaskSystem

/// Random access to an attachment file: any byte range, decrypting only the
/// chunks it touches.
///
/// Opening a sealed file checks its wrapper and commitment and
/// authenticates its final chunk, so `byteCount` is authenticated before
/// the first read, and a truncated or extended file is refused at once. A
/// plain file (no magic) is read as it is. Memory stays at one chunk.
public final class AttachmentReader {
  /// Whether the file is a sealed attachment (false: a plain file).
  public let isSealed: Bool
  /// The note key that sealed it, when sealed.
  public let keyID: KeyID?
  /// The plaintext length, authenticated for a sealed file.
  public let byteCount: UInt64
  private let path: String
  /// The open file: its descriptor stays valid for as long as this reader.
  private let file: OpenFile
  private var fd: Int32 { file.descriptor.rawValue }
  private let opener: ChunkedEncryption.RandomAccessOpener?

  /// Opens the attachment at `path` for `record`.
  ///
  /// - Parameters:
  ///   - path: a regular file.
  ///   - keyring: the key named in the wrapper must be in it.
  ///   - record: the record the attachment was sealed for.
  /// - Throws: `AttachmentError.truncatedWrapper`, `.unsupportedVersion`,
  ///   `.crypto` (`.unknownKeyID`, `.commitmentMismatch`,
  ///   `.missingFinalChunk`, `.finalChunkAuthenticationFailed`,
  ///   `.trailingData`…), `.system` (also for a path that is not a
  ///   regular file).
  public init(path: String, keyring: Keyring, record: String) throws {
    let input = try SystemIO.openForReading(path)
    self.path = path
    self.file = input
    let fd = input.descriptor.rawValue
    guard let size = try SystemIO.regularFileSize(input) else {
      throw AttachmentError.system(.wrongFileType(path: path, expected: "a regular file (random access)"))
    }
    var head = [UInt8](repeating: 0, count: Int(Swift.min(size, UInt64(Attachment.wrapperByteCount))))
    try head.withUnsafeMutableBytes { try SystemIO.read(fd, into: $0, at: 0, name: path) }
    guard Attachment.isSealed(prefix: head) else {
      (isSealed, keyID, byteCount, opener) = (false, nil, size, nil)
      return
    }
    // The reader keeps `input` open; the closure reads through it.
    let (id, opener) = try Self.open(head: head, size: size, keyring: keyring, record: record) {
      [input] position, buffer in
      try SystemIO.read(input.descriptor.rawValue, into: buffer, at: position, name: path)
    }
    (isSealed, keyID, byteCount, self.opener) = (true, id, opener.plaintextByteCount, opener)
  }

  /// The reading steps a random-access reader runs before the first read
  /// (docs/formats/attachment.md, steps 2–7, then step 9 on the final
  /// chunk) for a sealed file of `size` bytes beginning with `head`.
  ///
  /// Package seam: the vectors target runs the attachment vectors through
  /// it over bytes in memory, so both readers are checked without files.
  ///
  /// - Parameter read: fills a buffer from an offset of the whole file.
  /// - Returns: the key id and the opener of the payload.
  /// - Throws: as `init(path:keyring:record:)`.
  package static func open(
    head: [UInt8], size: UInt64, keyring: Keyring, record: String,
    read: @escaping (UInt64, UnsafeMutableRawBufferPointer) throws -> Void
  ) throws -> (KeyID, ChunkedEncryption.RandomAccessOpener) {
    let id = try Attachment.parseWrapper(head)
    guard let key = keyring.key(for: id) else { throw AttachmentError.crypto(.unknownKeyID(id)) }
    let offset = UInt64(Attachment.wrapperByteCount)
    let opener = try attachmentCall {
      try ChunkedEncryption.RandomAccessOpener(
        key: key.key, context: Attachment.context(wrapper: head, record: record), sealedByteCount: size - offset
      ) { position, buffer in try read(offset + position, buffer) }
    }
    return (id, opener)
  }

  /// Fills `buffer` with the plaintext at `offset`.
  ///
  /// - Throws: `AttachmentError.crypto(.rangeOutOfBounds)` when the range
  ///   is not inside the attachment; a chunk's authentication error (the
  ///   buffer is wiped); `.system`.
  public func read(offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws {
    guard let opener else {
      let length = UInt64(buffer.count)
      guard offset <= byteCount, length <= byteCount - offset else {
        throw AttachmentError.crypto(.rangeOutOfBounds(offset: offset, length: length, messageByteCount: byteCount))
      }
      try SystemIO.read(fd, into: buffer, at: offset, name: path)
      return
    }
    try attachmentCall { try opener.read(offset: offset, into: buffer) }
  }

  /// Returns `count` plaintext bytes at `offset`.
  ///
  /// - Throws: as `read(offset:into:)`.
  public func read(offset: UInt64, count: Int) throws -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    try bytes.withUnsafeMutableBytes { try read(offset: offset, into: $0) }
    return bytes
  }

  /// Writes `length` plaintext bytes from `offset` to file descriptor
  /// `output`, 1 MiB at a time, each piece verified before it is written.
  ///
  /// - Returns: what was written.
  /// - Throws: as `read(offset:into:)`; `AttachmentError.system`.
  public func copy(offset: UInt64, length: UInt64, to output: Int32) throws -> Attachment.Summary {
    try copy(offset: offset, length: length) { try SystemIO.write(output, $0, name: "<fd \(output)>") }
  }

  /// Writes `length` plaintext bytes from `offset` to a new file at
  /// `destination`, which appears only whole (temporary file, then rename).
  ///
  /// - Returns: what was written.
  /// - Throws: as `read(offset:into:)`; `AttachmentError.destinationExists`,
  ///   `.system`.
  public func copy(offset: UInt64, length: UInt64, toFile destination: String) throws -> Attachment.Summary {
    try Attachment.transform(descriptor: -1, name: path, to: destination, replacing: false) { _, write in
      try copy(offset: offset, length: length, write)
    }
  }

  private func copy(offset: UInt64, length: UInt64, _ write: Attachment.Write) throws -> Attachment.Summary {
    guard offset <= byteCount, length <= byteCount - offset else {
      throw AttachmentError.crypto(.rangeOutOfBounds(offset: offset, length: length, messageByteCount: byteCount))
    }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Attachment.readByteCount, alignment: 16)
    defer {
      buffer.initializeMemory(as: UInt8.self, repeating: 0)
      buffer.deallocate()
    }
    var done: UInt64 = 0
    while done < length {
      let piece = UnsafeMutableRawBufferPointer(
        rebasing: buffer[..<Int(Swift.min(length - done, UInt64(buffer.count)))])
      try read(offset: offset + done, into: piece)
      try write(UnsafeRawBufferPointer(piece))
      done += UInt64(piece.count)
    }
    return Attachment.Summary(isSealed: isSealed, keyID: keyID, plaintextByteCount: length, storedByteCount: length)
  }
}
