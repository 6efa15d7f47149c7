import FoundationEssentials

/// A sealed note value, format version 1:
///
///     tc1.<kid>:<base64 of nonce(12) || ciphertext || tag(16)>
///
/// `kid` is the sealing key's id as 8 lowercase hex digits; base64 is RFC
/// 4648 standard alphabet with padding, canonical only. The associated data
/// is the UTF-8 marker `tc1.<kid>:` followed by the caller's context bytes,
/// so the key id is authenticated and a value copied to another record (a
/// different context) does not open there.
///
/// A text whose start matches `^tc[1-9][0-9]*\.[0-9a-f]{8}:` is sealed;
/// any other text is plain and `open` returns it unchanged. A sealed text
/// that fails to parse or authenticate is an error, never plain text.
public struct SealedValue: Sendable, Equatable {
  /// The only format version this build writes and reads.
  public static let version = 1
  /// The largest plaintext a sealed value may carry: 16 MiB.
  public static let maximumPlaintextByteCount = 16 << 20
  /// The largest sealed text accepted by `parse`: the marker plus the base64
  /// of the largest payload.
  public static let maximumSealedByteCount = 13 + (maximumPlaintextByteCount + 28 + 2) / 3 * 4

  /// The id of the key that sealed the value.
  public let keyID: KeyID
  /// The nonce, ciphertext and tag.
  public let box: AES.GCM.SealedBox

  /// The marker `tc1.<kid>:` for this value's key.
  public var marker: String { Self.marker(for: keyID) }

  /// The canonical text form of this value.
  public var text: String { marker + Base64.encode(box.combined) }

  /// Whether `text` carries a sealed-value marker (of any version). Plain
  /// values are those for which this is false.
  public static func isSealed(_ text: String) -> Bool {
    withUTF8(of: text) { (try? header(of: $0, requiringVersion1: false)) != nil }
  }

  /// Parses a sealed text without opening it.
  ///
  /// - Returns: nil when `text` is plain (no marker).
  /// - Throws: `TaskCryptoError.unsupportedVersion`, `.tooLarge`,
  ///   `.invalidBase64` or `.truncated`, checked in that order.
  public static func parse(_ text: String) throws -> SealedValue? {
    try withUTF8(of: text) { utf8 in
      guard let header = try header(of: utf8, requiringVersion1: true) else { return nil }
      let body = try payloadText(of: utf8, after: header)
      guard let count = Base64.decodedLength(of: body) else { throw TaskCryptoError.invalidBase64 }
      let payload = try [UInt8](unsafeUninitializedCapacity: Swift.max(count, 1)) { buffer, initialized in
        guard count == 0 || Base64.decode(body, into: buffer.baseAddress!) else {
          throw TaskCryptoError.invalidBase64
        }
        initialized = count
      }
      return SealedValue(keyID: header.keyID, box: try AES.GCM.SealedBox(combined: payload))
    }
  }

  /// Seals UTF-8 text under the keyring's primary key.
  ///
  /// - Parameters:
  ///   - plaintext: the text; any text, including one that is itself sealed.
  ///   - keyring: the primary key seals.
  ///   - context: where the value will live, e.g. `note/<id>/body`; the same
  ///     context must be given to open it.
  /// - Returns: the sealed text `tc1.<kid>:<base64>`.
  /// - Throws: `TaskCryptoError.tooLarge` above 16 MiB,
  ///   `.resourceUnavailable` when the kernel gives no random bytes,
  ///   `.backendFailure`.
  public static func seal(_ plaintext: String, using keyring: Keyring, context: String = "") throws -> String {
    // The primary borrowed in place, not copied out of the keyring.
    let index = keyring.index(of: keyring.primaryID)!
    return try withUTF8(of: plaintext) { try seal(bytes: $0, using: keyring.keys[index], context: context, nonce: nil) }
  }

  /// Seals bytes under one key, with a fresh random nonce.
  ///
  /// The nonce comes from `SecureRandom`'s per-thread buffer of kernel
  /// randomness; the key's cipher context is reused (only the nonce is set
  /// per call) and the text is written in one allocation.
  ///
  /// - Throws: as `seal(_:using:context:)`.
  @_specialize(exported:true,where Bytes == [UInt8])
  public static func seal<Bytes: ContiguousBytes>(
    bytes: Bytes, using key: NoteKey, context: String = ""
  ) throws -> String {
    try bytes.withUnsafeBytes { try seal(bytes: $0, using: key, context: context, nonce: nil) }
  }

  /// The test seam for vectors: seals under a chosen nonce. Internal.
  static func seal<Bytes: ContiguousBytes>(
    bytes: Bytes, using key: NoteKey, context: String, nonce: [UInt8]
  ) throws -> String {
    precondition(nonce.count == AES.GCM.nonceByteCount)
    return try bytes.withUnsafeBytes { plain in
      try nonce.withUnsafeBytes { try seal(bytes: plain, using: key, context: context, nonce: $0) }
    }
  }

  /// Opens a sealed text, or returns a plain text unchanged.
  ///
  /// - Returns: the plaintext; for a value without a marker, the value.
  /// - Throws: from `parse`, then `TaskCryptoError.unknownKeyID` when the
  ///   keyring lacks the key, `.authenticationFailed` when the tag does not
  ///   verify (tampering, wrong key or wrong context), `.invalidUTF8` when
  ///   the plaintext is not text. Never returns a sealed value as plain.
  public static func open(_ value: String, using keyring: Keyring, context: String = "") throws -> String {
    try withUTF8(of: value) { try openString(text: $0, using: keyring, context: context) } ?? value
  }

  /// Opens a sealed text to bytes, or returns a plain text's UTF-8 bytes.
  ///
  /// - Throws: as `open(_:using:context:)`, except `.invalidUTF8`.
  public static func openBytes(_ value: String, using keyring: Keyring, context: String = "") throws -> [UInt8] {
    try withUTF8(of: value) { try open(text: $0, using: keyring, context: context) } ?? Array(value.utf8)
  }

  /// Opens this value.
  ///
  /// - Throws: `TaskCryptoError.unknownKeyID`, `.authenticationFailed`.
  public func open(using keyring: Keyring, context: String = "") throws -> [UInt8] {
    guard let key = keyring.key(for: keyID) else { throw TaskCryptoError.unknownKeyID(keyID) }
    return try key.marker.withBytes { marker in
      try Self.withUTF8(of: context) { try AES.GCM.open(box, using: key.key, authenticating: Array(marker) + $0) }
    }
  }

  /// The key id a sealed text names, without decoding or opening it.
  ///
  /// - Returns: nil for plain text.
  /// - Throws: `TaskCryptoError.unsupportedVersion` for a marker of another
  ///   version (its key id means nothing to this build).
  public static func keyID(of text: String) throws -> KeyID? {
    try withUTF8(of: text) { try header(of: $0, requiringVersion1: true)?.keyID }
  }

  /// Re-seals a value under the keyring's primary key, for rotation.
  ///
  /// A value already sealed by the primary key is returned unchanged (it
  /// needs no new nonce); a plain value is returned unchanged unless
  /// `sealingPlain` is true, in which case it is sealed.
  ///
  /// - Returns: the value to store and whether it differs from the input.
  /// - Throws: as `open(_:using:context:)` for a value that does not open;
  ///   then nothing is returned, so a caller never stores a half-rewrapped
  ///   value.
  public static func reseal(
    _ value: String, using keyring: Keyring, context: String = "", sealingPlain: Bool = false
  ) throws -> (value: String, changed: Bool) {
    let outcome = try withUTF8(of: value) { utf8 -> String? in
      guard let header = try header(of: utf8, requiringVersion1: true) else {
        return sealingPlain ? try seal(bytes: utf8, using: keyring.primary, context: context, nonce: nil) : nil
      }
      guard let plaintext = try open(text: utf8, using: keyring, context: context) else { return nil }
      guard header.keyID != keyring.primaryID else { return nil }
      return try plaintext.withUnsafeBytes { try seal(bytes: $0, using: keyring.primary, context: context, nonce: nil) }
    }
    return outcome.map { ($0, true) } ?? (value, false)
  }
}
