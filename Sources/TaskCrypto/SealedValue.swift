import Foundation

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
    header(of: text) != nil
  }

  /// Parses a sealed text without opening it.
  ///
  /// - Returns: nil when `text` is plain (no marker).
  /// - Throws: `TaskCryptoError.unsupportedVersion`, `.tooLarge`,
  ///   `.invalidBase64` or `.truncated`, checked in that order.
  public static func parse(_ text: String) throws -> SealedValue? {
    guard let (keyID, payload) = try decodePayload(text) else { return nil }
    return SealedValue(keyID: keyID, box: try AES.GCM.SealedBox(combined: payload))
  }

  /// Steps 1-5 of the reader (SECURITY.md §6): nil for plain text, else the
  /// key id and the decoded `nonce || ciphertext || tag`.
  static func decodePayload(_ text: String) throws -> (KeyID, [UInt8])? {
    guard let header = header(of: text) else { return nil }
    guard header.version == "1" else { throw TaskCryptoError.unsupportedVersion(header.version) }
    var text = text
    let payload = try text.withUTF8 { utf8 -> [UInt8]? in
      guard utf8.count <= maximumSealedByteCount else {
        throw TaskCryptoError.tooLarge(byteCount: utf8.count, limit: maximumSealedByteCount)
      }
      return Base64.decode(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[header.length...])))
    }
    guard let payload else { throw TaskCryptoError.invalidBase64 }
    guard payload.count >= AES.GCM.nonceByteCount + AES.GCM.tagByteCount else {
      throw TaskCryptoError.truncated(byteCount: payload.count)
    }
    return (header.keyID, payload)
  }

  /// Seals UTF-8 text under the keyring's primary key.
  ///
  /// - Parameters:
  ///   - plaintext: the text; any text, including one that is itself sealed.
  ///   - keyring: the primary key seals.
  ///   - context: where the value will live, e.g. `note/<id>/body`; the same
  ///     context must be given to open it.
  /// - Returns: the sealed text `tc1.<kid>:<base64>`.
  /// - Throws: `TaskCryptoError.tooLarge` above 16 MiB, `.backendFailure`.
  public static func seal(_ plaintext: String, using keyring: Keyring, context: String = "") throws -> String {
    try seal(bytes: Array(plaintext.utf8), using: keyring.primary, context: context)
  }

  /// Seals bytes under one key.
  ///
  /// - Throws: `TaskCryptoError.tooLarge` above 16 MiB, `.backendFailure`.
  public static func seal<Bytes: ContiguousBytes>(
    bytes: Bytes, using key: NoteKey, context: String = ""
  ) throws -> String {
    try seal(bytes: bytes, using: key, context: context, nonce: SecureRandom.bytes(count: AES.GCM.nonceByteCount))
  }

  /// The test seam for vectors: seals under a chosen nonce. Internal.
  static func seal<Bytes: ContiguousBytes>(
    bytes: Bytes, using key: NoteKey, context: String, nonce: [UInt8]
  ) throws -> String {
    let count = bytes.withUnsafeBytes(\.count)
    guard count <= maximumPlaintextByteCount else {
      throw TaskCryptoError.tooLarge(byteCount: count, limit: maximumPlaintextByteCount)
    }
    let combined = try AES.GCM.sealCombined(
      bytes, using: key.key, nonce: nonce, authenticating: aad(keyID: key.id, context: context))
    return combined.withUnsafeBytes { Base64.encode($0, prefix: Array(marker(for: key.id).utf8)) }
  }

  /// Opens a sealed text, or returns a plain text unchanged.
  ///
  /// - Returns: the plaintext; for a value without a marker, the value.
  /// - Throws: from `parse`, then `TaskCryptoError.unknownKeyID` when the
  ///   keyring lacks the key, `.authenticationFailed` when the tag does not
  ///   verify (tampering, wrong key or wrong context), `.invalidUTF8` when
  ///   the plaintext is not text. Never returns a sealed value as plain.
  public static func open(_ value: String, using keyring: Keyring, context: String = "") throws -> String {
    guard let (keyID, payload) = try decodePayload(value) else { return value }
    let bytes = try open(payload: payload, keyID: keyID, using: keyring, context: context)
    guard let text = String(validating: bytes, as: UTF8.self) else { throw TaskCryptoError.invalidUTF8 }
    return text
  }

  /// Opens a sealed text to bytes, or returns a plain text's UTF-8 bytes.
  ///
  /// - Throws: as `open(_:using:context:)`, except `.invalidUTF8`.
  public static func openBytes(_ value: String, using keyring: Keyring, context: String = "") throws -> [UInt8] {
    guard let (keyID, payload) = try decodePayload(value) else { return Array(value.utf8) }
    return try open(payload: payload, keyID: keyID, using: keyring, context: context)
  }

  /// Opens this value.
  ///
  /// - Throws: `TaskCryptoError.unknownKeyID`, `.authenticationFailed`.
  public func open(using keyring: Keyring, context: String = "") throws -> [UInt8] {
    try Self.open(payload: box.combined, keyID: keyID, using: keyring, context: context)
  }

  /// Steps 6-7 of the reader: find the key, then verify and decrypt.
  static func open(payload: [UInt8], keyID: KeyID, using keyring: Keyring, context: String) throws -> [UInt8] {
    guard let key = keyring.key(for: keyID) else { throw TaskCryptoError.unknownKeyID(keyID) }
    return try AES.GCM.open(combined: payload, using: key.key, authenticating: aad(keyID: keyID, context: context))
  }

  /// The key id a sealed text names, without decoding or opening it.
  ///
  /// - Returns: nil for plain text.
  /// - Throws: `TaskCryptoError.unsupportedVersion` for a marker of another
  ///   version (its key id means nothing to this build).
  public static func keyID(of text: String) throws -> KeyID? {
    guard let header = header(of: text) else { return nil }
    guard header.version == "1" else { throw TaskCryptoError.unsupportedVersion(header.version) }
    return header.keyID
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
    guard let (keyID, payload) = try decodePayload(value) else {
      guard sealingPlain else { return (value, false) }
      return (try seal(bytes: Array(value.utf8), using: keyring.primary, context: context), true)
    }
    let plaintext = try open(payload: payload, keyID: keyID, using: keyring, context: context)
    guard keyID != keyring.primaryID else { return (value, false) }
    return (try seal(bytes: plaintext, using: keyring.primary, context: context), true)
  }

  static func marker(for keyID: KeyID) -> String { "tc1.\(keyID.hex):" }

  static func aad(keyID: KeyID, context: String) -> [UInt8] {
    Array(marker(for: keyID).utf8) + Array(context.utf8)
  }

  /// Matches `^tc[1-9][0-9]*\.[0-9a-f]{8}:` by hand (no regex engine on the
  /// hot path) and returns the version digits, key id and marker length.
  static func header(of text: String) -> (version: String, keyID: KeyID, length: Int)? {
    var iterator = text.utf8.makeIterator()
    guard iterator.next() == UInt8(ascii: "t"), iterator.next() == UInt8(ascii: "c") else { return nil }
    var version = [UInt8]()
    var next = iterator.next()
    while let byte = next, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
      version.append(byte)
      next = iterator.next()
    }
    guard let first = version.first, first != UInt8(ascii: "0"), next == UInt8(ascii: ".") else { return nil }
    var kid = [UInt8]()
    for _ in 0..<8 {
      guard let byte = iterator.next(), Hex.value(of: byte) != nil else { return nil }
      kid.append(byte)
    }
    guard iterator.next() == UInt8(ascii: ":") else { return nil }
    guard let keyID = try? KeyID(hex: String(decoding: kid, as: UTF8.self)) else { return nil }
    return (String(decoding: version, as: UTF8.self), keyID, 2 + version.count + 1 + 8 + 1)
  }
}
