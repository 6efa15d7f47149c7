import TaskCrypto

extension Attachment {
  /// Reads up to `buffer.count` bytes into `buffer`; returns 0 only at the
  /// end of the input.
  public typealias Read = (_ buffer: UnsafeMutableRawBufferPointer) throws -> Int
  /// Writes all of `bytes`; they are valid only during the call.
  public typealias Write = (_ bytes: UnsafeRawBufferPointer) throws -> Void
  /// Receives the count of plaintext bytes done so far.
  public typealias Progress = (_ plaintextByteCount: UInt64) -> Void

  /// The size of each read from an input: 1 MiB.
  static let readByteCount = 1 << 20

  /// Seals a stream under the keyring's primary key, for `record`.
  ///
  /// Memory stays constant (under 2 MiB of buffers) whatever the input size. The key
  /// id goes into the wrapper; a fresh random salt gives the file its own
  /// AES key and nonces.
  ///
  /// - Parameters:
  ///   - read: the plaintext source.
  ///   - write: receives the sealed bytes in order, wrapper first.
  ///   - keyring: its primary key seals.
  ///   - record: the record the attachment belongs to, e.g. `attachment/42`;
  ///     opening needs the same record.
  ///   - progress: called after each MiB, if given.
  /// - Returns: what was sealed.
  /// - Throws: `AttachmentError.crypto` (`.tooLarge` past 4 PiB), or the
  ///   errors of `read` and `write`.
  public static func seal(
    reading read: Read, writing write: Write, using keyring: Keyring, record: String, progress: Progress? = nil
  ) throws -> Summary {
    try sealStream(read: read, write: write, key: keyring.primary, record: record, progress: progress)
  }

  /// Opens a stream for `record`: a sealed attachment is verified and
  /// decrypted with the keyring key its wrapper names; a plain input (no
  /// magic) is copied unchanged.
  ///
  /// `write` may receive a verified prefix before a later chunk fails; a
  /// caller that must not keep partial output writes to a temporary file
  /// (the file-path `open` does).
  ///
  /// - Returns: what was opened.
  /// - Throws: `AttachmentError.truncatedWrapper`, `.unsupportedVersion`,
  ///   `.crypto(.unknownKeyID)` (a retired key, or another vault's),
  ///   `.crypto` with the chunked-encryption cause (wrong record, altered,
  ///   truncated, reordered, appended), or the errors of `read` and `write`.
  public static func open(
    reading read: Read, writing write: Write, using keyring: Keyring, record: String, progress: Progress? = nil
  ) throws -> Summary {
    try openStream(read: read, write: write, keyring: keyring, record: record, progress: progress)
  }

  /// Seals what remains of file descriptor `input` into `output` (for
  /// example standard input to standard output); see
  /// `seal(reading:writing:using:record:progress:)`.
  ///
  /// - Throws: as that method; `AttachmentError.system` naming `read` or
  ///   `write`.
  public static func seal(
    fileDescriptor input: Int32, to output: Int32, using keyring: Keyring, record: String, progress: Progress? = nil
  ) throws -> Summary {
    try seal(
      reading: { try SystemIO.read(input, into: $0, name: "<fd \(input)>") },
      writing: { try SystemIO.write(output, $0, name: "<fd \(output)>") }, using: keyring, record: record,
      progress: progress)
  }

  /// Opens what remains of file descriptor `input` into `output`; see
  /// `open(reading:writing:using:record:progress:)`.
  ///
  /// - Throws: as that method; `AttachmentError.system` naming `read` or
  ///   `write`.
  public static func open(
    fileDescriptor input: Int32, to output: Int32, using keyring: Keyring, record: String, progress: Progress? = nil
  ) throws -> Summary {
    try open(
      reading: { try SystemIO.read(input, into: $0, name: "<fd \(input)>") },
      writing: { try SystemIO.write(output, $0, name: "<fd \(output)>") }, using: keyring, record: record,
      progress: progress)
  }

  /// The seal loop.
  static func sealStream(read: Read, write: Write, key: NoteKey, record: String, progress: Progress?) throws
    -> Summary
  {
    let wrapper = wrapper(keyID: key.id)
    let context = context(wrapper: wrapper, record: record)
    let sealer = try attachmentCall { try ChunkedEncryption.Sealer(key: key.key, context: context) }
    try wrapper.withUnsafeBytes { try write($0) }
    var stored = UInt64(wrapper.count)
    func emit(_ bytes: UnsafeRawBufferPointer) throws {
      try write(bytes)
      stored += UInt64(bytes.count)
    }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readByteCount, alignment: 16)
    defer {
      buffer.initializeMemory(as: UInt8.self, repeating: 0)
      buffer.deallocate()
    }
    var plaintext: UInt64 = 0
    while true {
      let count = try read(buffer)
      if count == 0 { break }
      try attachmentCall { try sealer.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]), emit: emit) }
      plaintext += UInt64(count)
      progress?(plaintext)
    }
    try attachmentCall { try sealer.finish(emit: emit) }
    return Summary(isSealed: true, keyID: key.id, plaintextByteCount: plaintext, storedByteCount: stored)
  }

  /// The open loop: magic, wrapper, key, then the chunked payload.
  static func openStream(read: Read, write: Write, keyring: Keyring, record: String, progress: Progress?) throws
    -> Summary
  {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readByteCount, alignment: 16)
    defer { buffer.deallocate() }
    // The first bytes decide: the magic means sealed, anything else plain.
    let head = try readFully(read, count: magic.count, buffer: buffer)
    guard isSealed(prefix: head) else {
      var copied = UInt64(head.count)
      try head.withUnsafeBytes { try write($0) }
      while true {
        let count = try read(buffer)
        if count == 0 { break }
        try write(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        copied += UInt64(count)
        progress?(copied)
      }
      return Summary(isSealed: false, keyID: nil, plaintextByteCount: copied, storedByteCount: copied)
    }
    let opener = StreamOpener(keyring: keyring, record: record)
    func emit(_ bytes: UnsafeRawBufferPointer) throws {
      try write(bytes)
      progress?(opener.plaintextByteCount + UInt64(bytes.count))
    }
    try head.withUnsafeBytes { try opener.update($0, emit: emit) }
    while true {
      let count = try read(buffer)
      if count == 0 { break }
      try opener.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]), emit: emit)
    }
    return try opener.finish(emit: emit)
  }

  /// Reads until `count` bytes or the end of the input.
  static func readFully(_ read: Read, count: Int, buffer: UnsafeMutableRawBufferPointer) throws -> [UInt8] {
    var bytes = [UInt8]()
    while bytes.count < count {
      let got = try read(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(count - bytes.count)]))
      if got == 0 { break }
      bytes += UnsafeRawBufferPointer(rebasing: buffer[0..<got])
    }
    return bytes
  }
}
