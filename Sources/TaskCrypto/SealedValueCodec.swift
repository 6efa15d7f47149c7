/// The byte-level reader and writer of sealed values: the marker, the
/// header match, and sealing or opening straight between the caller's
/// buffers and the text, with no intermediate copies.
extension SealedValue {
  /// The 13-byte marker `tc1.<kid>:` of one key, kept inline.
  struct Marker: Equatable, Sendable {
    /// The marker's length in bytes.
    static let byteCount = 13
    private var storage: (UInt64, UInt64) = (0, 0)

    init(keyID: KeyID) {
      withUnsafeMutableBytes(of: &storage) { out in
        out[0] = UInt8(ascii: "t")
        out[1] = UInt8(ascii: "c")
        out[2] = UInt8(ascii: "1")
        out[3] = UInt8(ascii: ".")
        for index in 0..<8 {
          out[4 + index] = Hex.digit(UInt8(truncatingIfNeeded: keyID.rawValue >> UInt32(28 - 4 * index)))
        }
        out[12] = UInt8(ascii: ":")
      }
    }

    static func == (lhs: Marker, rhs: Marker) -> Bool {
      lhs.storage == rhs.storage
    }

    /// Calls `body` with the 13 marker bytes.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
      try Swift.withUnsafeBytes(of: storage) { try body(UnsafeRawBufferPointer(rebasing: $0[..<Self.byteCount])) }
    }
  }

  /// A matched marker: where the version digits are, the key id, and the
  /// marker's length.
  struct Header {
    var versionDigits: Range<Int>
    var keyID: KeyID
    var length: Int
  }

  static func marker(for keyID: KeyID) -> String { "tc1.\(keyID.hex):" }

  /// `tc1.` as a little-endian 32-bit load.
  private static let versionOnePrefix = UInt32(littleEndian: 0x2e31_6374)

  /// Calls `body` with the UTF-8 bytes of `text`, without a copy for native
  /// strings.
  static func withUTF8<Result>(of text: String, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows
    -> Result
  {
    if let result = try text.utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
      return result
    }
    return try Array(text.utf8).withUnsafeBytes(body)
  }

  /// Matches `^tc[1-9][0-9]*\.[0-9a-f]{8}:` by hand (no regex engine on the
  /// hot path, no allocation).
  ///
  /// - Returns: nil for plain text.
  /// - Throws: `TaskCryptoError.unsupportedVersion` when
  ///   `requiringVersion1` and the version is not 1.
  static func header(of text: UnsafeRawBufferPointer, requiringVersion1: Bool) throws -> Header? {
    // The marker this build writes, `tc1.` + 8 hex + `:`, in a few loads.
    if text.count >= Marker.byteCount, text.loadUnaligned(as: UInt32.self) == versionOnePrefix,
      text[12] == UInt8(ascii: ":"), let kid = Hex.keyIDValue(of: UnsafeRawBufferPointer(rebasing: text[4..<12]))
    {
      return Header(versionDigits: 2..<3, keyID: KeyID(rawValue: kid), length: Marker.byteCount)
    }
    guard text.count >= Marker.byteCount, text[0] == UInt8(ascii: "t"), text[1] == UInt8(ascii: "c") else {
      return nil
    }
    var index = 2
    while index < text.count, text[index] >= UInt8(ascii: "0"), text[index] <= UInt8(ascii: "9") { index += 1 }
    let digits = 2..<index
    guard !digits.isEmpty, text[2] != UInt8(ascii: "0"), index + 10 <= text.count, text[index] == UInt8(ascii: ".")
    else { return nil }
    guard let kid = Hex.keyIDValue(of: UnsafeRawBufferPointer(rebasing: text[(index + 1)..<(index + 9)])),
      text[index + 9] == UInt8(ascii: ":")
    else { return nil }
    if requiringVersion1 && !(digits.count == 1 && text[2] == UInt8(ascii: "1")) {
      throw TaskCryptoError.unsupportedVersion(String(decoding: text[digits], as: UTF8.self))
    }
    return Header(versionDigits: digits, keyID: KeyID(rawValue: kid), length: index + 10)
  }

  /// The base64 after a version-1 header, within the size limit.
  ///
  /// - Throws: `TaskCryptoError.tooLarge` above `maximumSealedByteCount`.
  static func payloadText(of text: UnsafeRawBufferPointer, after header: Header) throws -> UnsafeRawBufferPointer {
    guard text.count <= maximumSealedByteCount else {
      throw TaskCryptoError.tooLarge(byteCount: text.count, limit: maximumSealedByteCount)
    }
    return UnsafeRawBufferPointer(rebasing: text[header.length...])
  }

  /// Seals `plain` into a new text `marker || base64(nonce || ciphertext ||
  /// tag)` in one allocation: the payload is encrypted into the tail of the
  /// text and base64-encoded in place. `nonce` nil draws a random one.
  static func seal(
    bytes plain: UnsafeRawBufferPointer, using key: NoteKey, context: String, nonce: UnsafeRawBufferPointer?
  ) throws -> String {
    guard plain.count <= maximumPlaintextByteCount else {
      throw TaskCryptoError.tooLarge(byteCount: plain.count, limit: maximumPlaintextByteCount)
    }
    let nonceCount = AES.GCM.nonceByteCount
    let payloadCount = nonceCount + plain.count + AES.GCM.tagByteCount
    let textCount = Marker.byteCount + Base64.encodedLength(of: payloadCount)
    return try String(unsafeUninitializedCapacity: textCount) { text in
      let base = text.baseAddress!
      let payload = base + (textCount - payloadCount)
      let marker = UnsafeMutableRawBufferPointer(start: base, count: Marker.byteCount)
      key.marker.withBytes { marker.copyMemory(from: $0) }
      let nonceBytes = UnsafeMutableRawBufferPointer(start: payload, count: nonceCount)
      if let nonce {
        nonceBytes.copyMemory(from: nonce)
      } else {
        try SecureRandom.nonce(into: nonceBytes)
      }
      try withUTF8(of: context) { contextBytes in
        try AES.GCM.sealRaw(
          plain, using: key.key, nonce: UnsafeRawBufferPointer(nonceBytes),
          authenticating: UnsafeRawBufferPointer(marker), contextBytes,
          ciphertext: UnsafeMutableRawBufferPointer(start: payload + nonceCount, count: plain.count),
          tag: UnsafeMutableRawBufferPointer(start: payload + nonceCount + plain.count, count: AES.GCM.tagByteCount))
      }
      Base64.encode(UnsafePointer(payload), count: payloadCount, into: base + Marker.byteCount)
      return textCount
    }
  }

  /// The payload of a version-1 sealed text whose length checks passed
  /// (steps 1-4 of the reader): where its base64 is and how many plaintext
  /// bytes it carries.
  struct Payload {
    let header: Header
    let body: UnsafeRawBufferPointer
    /// The plaintext's length: the payload less nonce and tag.
    let plaintextCount: Int
    /// What an output buffer must hold: the ciphertext and the tag are
    /// decoded into it together, and the ciphertext decrypted in place.
    var outputCapacity: Int { plaintextCount + AES.GCM.tagByteCount }

    /// - Returns: nil for plain text.
    /// - Throws: `TaskCryptoError.unsupportedVersion`, `.tooLarge`,
    ///   `.invalidBase64`, `.truncated`, in that order.
    init?(text: UnsafeRawBufferPointer) throws {
      guard let header = try SealedValue.header(of: text, requiringVersion1: true) else { return nil }
      let body = try SealedValue.payloadText(of: text, after: header)
      guard let payloadCount = Base64.decodedLength(of: body) else { throw TaskCryptoError.invalidBase64 }
      let minimum = AES.GCM.nonceByteCount + AES.GCM.tagByteCount
      guard payloadCount >= minimum else {
        // Tell non-canonical base64 from a short payload, as the format asks.
        let valid =
          payloadCount == 0
          || withUnsafeTemporaryAllocation(of: UInt8.self, capacity: minimum) {
            Base64.decode(body, into: $0.baseAddress!)
          }
        throw valid ? TaskCryptoError.truncated(byteCount: payloadCount) : TaskCryptoError.invalidBase64
      }
      self.header = header
      self.body = body
      plaintextCount = payloadCount - minimum
    }

    /// Steps 5-7: decodes the payload into `out` (`outputCapacity` bytes),
    /// finds the key and decrypts in place. On failure the plaintext part
    /// of `out` is wiped.
    ///
    /// - Throws: `TaskCryptoError.invalidBase64`, `.unknownKeyID`,
    ///   `.authenticationFailed`, in that order.
    func open(
      text: UnsafeRawBufferPointer, using keyring: Keyring, context: String, into out: UnsafeMutablePointer<UInt8>
    ) throws {
      // The nonce is exactly the first 16 characters (4 whole groups).
      let nonceText = UnsafeRawBufferPointer(rebasing: body[..<16])
      let rest = UnsafeRawBufferPointer(rebasing: body[16...])
      let count = plaintextCount
      var nonce: (UInt64, UInt64) = (0, 0)
      let decoded = withUnsafeMutableBytes(of: &nonce) { nonceBytes in
        Base64.decode(nonceText, into: nonceBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
          && Base64.decode(rest, into: out)
      }
      guard decoded else { throw TaskCryptoError.invalidBase64 }
      guard let index = keyring.index(of: header.keyID) else { throw TaskCryptoError.unknownKeyID(header.keyID) }
      let ciphertext = UnsafeMutableRawBufferPointer(start: out, count: count)
      try withUnsafeBytes(of: nonce) { nonceBytes in
        try SealedValue.withUTF8(of: context) { contextBytes in
          try AES.GCM.openRaw(
            nonce: UnsafeRawBufferPointer(rebasing: nonceBytes[..<AES.GCM.nonceByteCount]),
            ciphertext: UnsafeRawBufferPointer(ciphertext),
            tag: UnsafeRawBufferPointer(start: out + count, count: AES.GCM.tagByteCount),
            using: keyring.keys[index].key,
            authenticating: UnsafeRawBufferPointer(rebasing: text[..<Marker.byteCount]), contextBytes,
            into: ciphertext)
        }
      }
    }
  }

  /// Steps 1-7 of the reader (SECURITY.md): nil for plain text, else the
  /// plaintext. The ciphertext is decoded straight into the result and
  /// decrypted in place; on failure the result is wiped and not returned.
  ///
  /// - Throws: `TaskCryptoError.unsupportedVersion`, `.tooLarge`,
  ///   `.invalidBase64`, `.truncated`, `.unknownKeyID`,
  ///   `.authenticationFailed`, in that order.
  static func open(text: UnsafeRawBufferPointer, using keyring: Keyring, context: String) throws -> [UInt8]? {
    guard let payload = try Payload(text: text) else { return nil }
    return try [UInt8](unsafeUninitializedCapacity: payload.outputCapacity) { buffer, initialized in
      try payload.open(text: text, using: keyring, context: context, into: buffer.baseAddress!)
      initialized = payload.plaintextCount
    }
  }

  /// As `open(text:using:context:)`, then step 8 for text: the plaintext
  /// must be UTF-8. It is decoded and decrypted straight into the new
  /// string's storage (one allocation, no copy), and checked there before
  /// the string exists; invalid UTF-8 is wiped and refused, never repaired.
  ///
  /// - Throws: as `open(text:using:context:)`, then
  ///   `TaskCryptoError.invalidUTF8`.
  static func openString(text: UnsafeRawBufferPointer, using keyring: Keyring, context: String) throws -> String? {
    guard let payload = try Payload(text: text) else { return nil }
    return try String(unsafeUninitializedCapacity: payload.outputCapacity) { buffer in
      let out = buffer.baseAddress!
      try payload.open(text: text, using: keyring, context: context, into: out)
      let plaintext = UnsafeMutableRawBufferPointer(start: out, count: payload.plaintextCount)
      guard UTF8Text.isValid(UnsafeRawBufferPointer(plaintext)) else {
        wipe(plaintext)
        throw TaskCryptoError.invalidUTF8
      }
      return payload.plaintextCount
    }
  }
}

/// UTF-8 validation for opened text: eight bytes at a time while they are
/// ASCII (most notes), the standard library's strict validator otherwise.
enum UTF8Text {
  /// Whether `bytes` is well-formed UTF-8 (no overlong forms, surrogates or
  /// values above U+10FFFF), as `String(validating:as:)` decides.
  static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
    let count = bytes.count
    guard let base = bytes.baseAddress else { return true }
    let highBits: UInt64 = 0x8080_8080_8080_8080
    var offset = 0
    while count &- offset >= 32 {
      let words =
        base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        | base.loadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self)
        | base.loadUnaligned(fromByteOffset: offset &+ 16, as: UInt64.self)
        | base.loadUnaligned(fromByteOffset: offset &+ 24, as: UInt64.self)
      guard words & highBits == 0 else { break }
      offset &+= 32
    }
    while count &- offset >= 8, base.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & highBits == 0 {
      offset &+= 8
    }
    while offset < count, base.load(fromByteOffset: offset, as: UInt8.self) < 0x80 { offset &+= 1 }
    guard offset < count else { return true }
    return String(validating: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self) != nil
  }
}
