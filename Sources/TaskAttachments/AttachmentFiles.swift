import TaskCrypto

extension Attachment {
  /// Seals the file at `source` into a new file at `destination`, under
  /// the keyring's primary key, for `record`.
  ///
  /// The sealed bytes go to a temporary file beside `destination` (mode
  /// 0600), which is flushed and only then given the real name; on any
  /// failure it is removed. An existing `destination` is never replaced.
  ///
  /// - Returns: what was sealed.
  /// - Throws: `AttachmentError.destinationExists`, `.system`, `.crypto`.
  public static func seal(
    file source: String, to destination: String, using keyring: Keyring, record: String, progress: Progress? = nil
  ) throws -> Summary {
    try transform(source, to: destination, replacing: false) { input, write in
      try sealStream(
        read: { try SystemIO.read(input, into: $0, name: source) }, write: write, key: keyring.primary,
        record: record, progress: progress)
    }
  }

  /// Opens the file at `source` into a new file at `destination`, for
  /// `record`: a sealed attachment is verified and decrypted, a plain file
  /// is copied unchanged.
  ///
  /// The plaintext goes to a temporary file beside `destination` (mode
  /// 0600) that takes the real name only after the final chunk verified; a
  /// failed open removes it, so no plaintext of a broken or forged file
  /// ever appears under `destination`.
  ///
  /// - Returns: what was opened.
  /// - Throws: as `open(reading:writing:using:record:progress:)`;
  ///   `AttachmentError.destinationExists`, `.system`.
  public static func open(
    file source: String, to destination: String, using keyring: Keyring, record: String, progress: Progress? = nil
  ) throws -> Summary {
    try transform(source, to: destination, replacing: false) { input, write in
      try openStream(
        read: { try SystemIO.read(input, into: $0, name: source) }, write: write, keyring: keyring, record: record,
        progress: progress)
    }
  }

  /// Re-seals a sealed attachment in place under the keyring's primary
  /// key, streaming, and atomically: the file is replaced only after the
  /// old one fully verified and the new one is on disk. Run it over every
  /// attachment after a rotation, before retiring the old key.
  ///
  /// - Returns: what was written; `keyID` is the primary's.
  /// - Throws: `AttachmentError.notSealed` for a plain file, the errors of
  ///   `open`, `.system`.
  public static func rewrap(
    file path: String, using keyring: Keyring, record: String, progress: Progress? = nil
  ) throws -> Summary {
    try transform(path, to: path, replacing: true) { input, write in
      let read: Read = { try SystemIO.read(input, into: $0, name: path) }
      let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: magic.count, alignment: 1)
      defer { buffer.deallocate() }
      let head = try readFully(read, count: magic.count, buffer: buffer)
      guard isSealed(prefix: head) else { throw AttachmentError.notSealed(path: path) }
      // The old file is opened through a pipe of chunks straight into a new
      // sealer: plaintext never touches the disk.
      var pending = head
      let replay: Read = { target in
        guard pending.isEmpty else {
          let count = Swift.min(pending.count, target.count)
          pending.withUnsafeBytes { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
          pending.removeFirst(count)
          return count
        }
        return try read(target)
      }
      return try rewrapStream(read: replay, write: write, keyring: keyring, record: record, progress: progress)
    }
  }

  /// Opens `read` and seals what it yields under the primary key, chunk by
  /// chunk, without holding the file.
  static func rewrapStream(read: Read, write: Write, keyring: Keyring, record: String, progress: Progress?) throws
    -> Summary
  {
    let primary = keyring.primary
    let wrapper = wrapper(keyID: primary.id)
    let sealer = try attachmentCall {
      try ChunkedEncryption.Sealer(key: primary.key, context: context(wrapper: wrapper, record: record))
    }
    try wrapper.withUnsafeBytes { try write($0) }
    var stored = UInt64(wrapper.count)
    func emit(_ bytes: UnsafeRawBufferPointer) throws {
      try write(bytes)
      stored += UInt64(bytes.count)
    }
    let opened = try openStream(
      read: read, write: { plain in try attachmentCall { try sealer.update(plain, emit: emit) } }, keyring: keyring,
      record: record, progress: progress)
    try attachmentCall { try sealer.finish(emit: emit) }
    return Summary(
      isSealed: true, keyID: primary.id, plaintextByteCount: opened.plaintextByteCount, storedByteCount: stored)
  }

  /// Seals what remains of file descriptor `input` (for example standard
  /// input) into a new file at `destination`, as `seal(file:to:…)` does.
  ///
  /// - Throws: as `seal(file:to:using:record:progress:)`.
  public static func seal(
    fileDescriptor input: Int32, toFile destination: String, using keyring: Keyring, record: String,
    progress: Progress? = nil
  ) throws -> Summary {
    try transform(descriptor: input, name: "<fd \(input)>", to: destination, replacing: false) { input, write in
      try sealStream(
        read: { try SystemIO.read(input, into: $0, name: "<fd \(input)>") }, write: write, key: keyring.primary,
        record: record, progress: progress)
    }
  }

  /// Opens what remains of file descriptor `input` into a new file at
  /// `destination`, as `open(file:to:…)` does: the file appears only after
  /// the final chunk verified.
  ///
  /// - Throws: as `open(file:to:using:record:progress:)`.
  public static func open(
    fileDescriptor input: Int32, toFile destination: String, using keyring: Keyring, record: String,
    progress: Progress? = nil
  ) throws -> Summary {
    try transform(descriptor: input, name: "<fd \(input)>", to: destination, replacing: false) { input, write in
      try openStream(
        read: { try SystemIO.read(input, into: $0, name: "<fd \(input)>") }, write: write, keyring: keyring,
        record: record, progress: progress)
    }
  }

  /// Opens `source` and runs `transform(descriptor:…)` on it.
  private static func transform(
    _ source: String, to destination: String, replacing: Bool, _ body: (Int32, Write) throws -> Summary
  ) throws -> Summary {
    if !replacing && SystemIO.exists(destination) { throw AttachmentError.destinationExists(path: destination) }
    let input = try SystemIO.openForReading(source)
    // The open file (and so its descriptor) lives until the work is done.
    return try withExtendedLifetime(input) {
      try transform(descriptor: input.descriptor.rawValue, name: source, to: destination, replacing: replacing, body)
    }
  }

  /// Reads `input`, writes through `body` into a temporary file beside
  /// `destination`, and gives it the real name only when `body` returned;
  /// on any failure the temporary file is removed.
  static func transform(
    descriptor input: Int32, name: String, to destination: String, replacing: Bool,
    _ body: (Int32, Write) throws -> Summary
  ) throws -> Summary {
    if !replacing && SystemIO.exists(destination) { throw AttachmentError.destinationExists(path: destination) }
    let temporary = try SystemIO.createTemporary(beside: destination)
    var open = true
    do {
      let summary = try body(input) { try SystemIO.writeCreated(temporary.fd, $0, path: temporary.path) }
      open = false
      try SystemIO.finish(temporary.fd, path: temporary.path)
      if replacing {
        try SystemIO.move(temporary.path, to: destination)
      } else {
        try SystemIO.linkNew(temporary.path, to: destination)
      }
      try SystemIO.fsyncDirectory(of: destination)
      return summary
    } catch {
      if open { SystemIO.abandon(temporary.fd, path: temporary.path) }
      try? SystemIO.unlink(temporary.path)
      throw error
    }
  }
}
