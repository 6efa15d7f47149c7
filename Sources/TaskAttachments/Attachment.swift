import TaskCrypto

/// Attachment files sealed with C2SP chunked encryption (Cobblestone-256:
/// HKDF-SHA-512 and AES-256-GCM in 16 KiB chunks), inside a small TaskKey
/// wrapper. The byte layout, version 1 (docs/formats/attachment.md):
///
///     magic (8) = 89 54 4B 41 0D 0A 1A 0A   ("\x89TKA\r\n\x1a\n")
///     version (1) = 01
///     key id (4), big-endian: the note key that sealed it
///     salt (24) || commitment (32) || chunks…   (the standard's bytes)
///
/// The standard's context is the 13 wrapper bytes followed by the UTF-8
/// record name (for example `attachment/<id>`), so a file moved to another
/// record, or a wrapper byte changed, fails the commitment check before any
/// chunk is decrypted.
///
/// A file that does not begin with the magic is plain: `open` returns it
/// unchanged, as plain notes pass through. A file that begins with the
/// magic and does not authenticate is an error, never plain.
///
/// Every operation streams with constant memory (a few MiB whatever the
/// file size); file outputs are written to a temporary file in the
/// destination directory and take the real name only after the last chunk
/// verified.
public enum Attachment {
  /// The 8 bytes every sealed attachment begins with.
  public static let magic: [UInt8] = [0x89, 0x54, 0x4B, 0x41, 0x0D, 0x0A, 0x1A, 0x0A]
  /// The only format version this build writes and reads.
  public static let formatVersion: UInt8 = 1
  /// Bytes of the wrapper: magic, version and key id.
  public static let wrapperByteCount = 13
  /// Bytes before the first chunk: the wrapper and the standard's header.
  public static let headerByteCount = wrapperByteCount + ChunkedEncryption.headerByteCount

  /// What a seal, open or rewrap did.
  public struct Summary: Equatable, Sendable {
    /// Whether the input (for open) or output (for seal, rewrap) is sealed;
    /// false when a plain file passed through `open` unchanged.
    public let isSealed: Bool
    /// The note key that sealed the attachment, when sealed.
    public let keyID: KeyID?
    /// Plaintext bytes read or written.
    public let plaintextByteCount: UInt64
    /// Sealed bytes read or written (equal to the plaintext count for a
    /// plain file).
    public let storedByteCount: UInt64
  }

  /// The wrapper for `keyID`: magic, version, key id.
  static func wrapper(keyID: KeyID) -> [UInt8] {
    magic + [formatVersion] + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: keyID.rawValue >> $0) }
  }

  /// The standard's context: the wrapper bytes, then the record's UTF-8.
  static func context(wrapper: [UInt8], record: String) -> [UInt8] {
    wrapper + Array(record.utf8)
  }

  /// Whether `prefix` (the first bytes of a file, up to 8) marks a sealed
  /// attachment. A file shorter than the magic is plain.
  public static func isSealed<Bytes: Collection>(prefix: Bytes) -> Bool where Bytes.Element == UInt8 {
    prefix.count >= magic.count && prefix.prefix(magic.count).elementsEqual(magic)
  }

  /// Parses a complete 13-byte wrapper (which begins with the magic).
  ///
  /// - Returns: the key id.
  /// - Throws: `AttachmentError.truncatedWrapper`, `.unsupportedVersion`.
  static func parseWrapper(_ bytes: [UInt8]) throws -> KeyID {
    guard bytes.count == wrapperByteCount else { throw AttachmentError.truncatedWrapper(byteCount: bytes.count) }
    guard bytes[8] == formatVersion else { throw AttachmentError.unsupportedVersion(bytes[8]) }
    return KeyID(rawValue: bytes[9..<13].reduce(0) { $0 << 8 | UInt32($1) })
  }

  /// The sealed size of an attachment of `plaintextByteCount` bytes.
  ///
  /// - Throws: `AttachmentError.crypto(.tooLarge)` at or above 4 PiB.
  public static func sealedByteCount(plaintextByteCount: UInt64) throws -> UInt64 {
    try attachmentCall {
      UInt64(wrapperByteCount) + (try ChunkedEncryption.sealedByteCount(plaintextByteCount: plaintextByteCount))
    }
  }
}
