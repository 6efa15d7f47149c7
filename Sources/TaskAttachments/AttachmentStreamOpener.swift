import TaskCrypto

extension Attachment {
  /// Opens one sealed attachment from bytes pushed in as they arrive (an
  /// HTTP body, a pipe), in any pieces: the 13-byte wrapper first, then
  /// the chunked payload; plaintext comes out as each chunk verifies.
  ///
  /// The same reading steps as `open(reading:writing:using:record:)` on a
  /// sealed input, in the same order, with one difference: an input that
  /// does not begin with the magic is refused (`notSealed`), never copied
  /// as plain. `emit` may receive a verified prefix before a later chunk
  /// fails: a caller that must not keep partial output writes to a
  /// temporary and keeps it only once `finish` returned. Memory stays at
  /// one chunk.
  public final class StreamOpener {
    private let keyring: Keyring
    private let record: String
    /// The wrapper's bytes while it is incomplete.
    private var wrapper: [UInt8] = []
    private var opener: ChunkedEncryption.Opener?
    /// The first failure: every later call throws it again.
    private var failure: AttachmentError?
    /// The key id the wrapper names, once the wrapper is complete and the
    /// keyring holds that key.
    public private(set) var keyID: KeyID?
    /// The bytes taken so far, wrapper included.
    public private(set) var storedByteCount: UInt64 = 0
    /// The verified plaintext bytes emitted so far.
    public private(set) var plaintextByteCount: UInt64 = 0

    /// An opener for an attachment sealed for `record` under a key of
    /// `keyring`.
    public init(keyring: Keyring, record: String) {
      (self.keyring, self.record) = (keyring, record)
    }

    /// Takes the next sealed bytes; `emit` receives verified plaintext in
    /// order (valid only during the call).
    ///
    /// - Throws: `AttachmentError.notSealed` (the first bytes are not the
    ///   magic), `.unsupportedVersion`, `.crypto(.unknownKeyID)`, `.crypto`
    ///   for the payload's header (`.commitmentMismatch`…), or the errors
    ///   of `emit`; then the same error on every later call. A chunk's
    ///   failure is reported by `finish`.
    public func update(_ bytes: UnsafeRawBufferPointer, emit: Write) throws {
      if let failure { throw failure }
      storedByteCount += UInt64(bytes.count)
      var rest = bytes
      do {
        if opener == nil {
          let needed = min(wrapperByteCount - wrapper.count, rest.count)
          wrapper += rest[..<needed]
          rest = UnsafeRawBufferPointer(rebasing: rest[needed...])
          let magicSeen = min(wrapper.count, magic.count)
          guard wrapper[..<magicSeen].elementsEqual(magic[..<magicSeen]) else {
            throw AttachmentError.notSealed(path: record)
          }
          guard wrapper.count == wrapperByteCount else { return }
          try open()
        }
        let opener = opener!
        try attachmentCall { try opener.update(rest, emit: { try counted($0, emit) }) }
      } catch let error as AttachmentError {
        failure = error
        throw error
      }
    }

    /// Ends the input: authenticates the final chunk and emits what is
    /// left.
    ///
    /// - Returns: what was opened.
    /// - Throws: `AttachmentError.truncatedWrapper` (the input ended inside
    ///   the wrapper), `.crypto` with the chunked-encryption cause
    ///   (`.truncatedHeader`, `.missingFinalChunk`,
    ///   `.chunkAuthenticationFailed`, `.trailingData`…), any earlier
    ///   error, or the errors of `emit`.
    public func finish(emit: Write) throws -> Summary {
      if let failure { throw failure }
      do {
        guard let opener else { throw AttachmentError.truncatedWrapper(byteCount: wrapper.count) }
        try attachmentCall { try opener.finish(emit: { try counted($0, emit) }) }
      } catch let error as AttachmentError {
        failure = error
        throw error
      }
      return Summary(
        isSealed: true, keyID: keyID, plaintextByteCount: plaintextByteCount, storedByteCount: storedByteCount)
    }

    /// The complete wrapper read: its version and key checked, the
    /// payload's opener made for its context.
    private func open() throws {
      let id = try parseWrapper(wrapper)
      guard let key = keyring.key(for: id) else { throw AttachmentError.crypto(.unknownKeyID(id)) }
      opener = try attachmentCall {
        try ChunkedEncryption.Opener(key: key.key, context: context(wrapper: wrapper, record: record))
      }
      keyID = id
    }

    /// Passes `bytes` to `emit`, then counts them.
    private func counted(_ bytes: UnsafeRawBufferPointer, _ emit: Write) throws {
      try emit(bytes)
      plaintextByteCount += UInt64(bytes.count)
    }
  }
}
