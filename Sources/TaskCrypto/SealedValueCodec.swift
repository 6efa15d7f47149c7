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
    guard text.count >= Marker.byteCount, text[0] == UInt8(ascii: "t"), text[1] == UInt8(ascii: "c") else {
      return nil
    }
    var index = 2
    while index < text.count, text[index] >= UInt8(ascii: "0"), text[index] <= UInt8(ascii: "9") { index += 1 }
    let digits = 2..<index
    guard !digits.isEmpty, text[2] != UInt8(ascii: "0"), index + 10 <= text.count, text[index] == UInt8(ascii: ".")
    else { return nil }
    var kid: UInt32 = 0
    for offset in 1...8 {
      guard let value = Hex.value(of: text[index + offset]) else { return nil }
      kid = kid << 4 | UInt32(value)
    }
    guard text[index + 9] == UInt8(ascii: ":") else { return nil }
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

  /// Steps 1-7 of the reader (SECURITY.md): nil for plain text, else the
  /// plaintext. The ciphertext is decoded straight into the result and
  /// decrypted in place; on failure the result is wiped and not returned.
  ///
  /// - Throws: `TaskCryptoError.unsupportedVersion`, `.tooLarge`,
  ///   `.invalidBase64`, `.truncated`, `.unknownKeyID`,
  ///   `.authenticationFailed`, in that order.
  static func open(text: UnsafeRawBufferPointer, using keyring: Keyring, context: String) throws -> [UInt8]? {
    guard let header = try header(of: text, requiringVersion1: true) else { return nil }
    let body = try payloadText(of: text, after: header)
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
    // The nonce is exactly the first 16 characters (4 whole groups).
    let nonceText = UnsafeRawBufferPointer(rebasing: body[..<16])
    let rest = UnsafeRawBufferPointer(rebasing: body[16...])
    let count = payloadCount - minimum
    var nonce: (UInt64, UInt64) = (0, 0)
    return try [UInt8](unsafeUninitializedCapacity: count + AES.GCM.tagByteCount) { buffer, initialized in
      let out = buffer.baseAddress!
      let decoded = withUnsafeMutableBytes(of: &nonce) { nonceBytes in
        Base64.decode(nonceText, into: nonceBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
          && Base64.decode(rest, into: out)
      }
      guard decoded else { throw TaskCryptoError.invalidBase64 }
      guard let key = keyring.key(for: header.keyID) else { throw TaskCryptoError.unknownKeyID(header.keyID) }
      let ciphertext = UnsafeMutableRawBufferPointer(start: out, count: count)
      try withUnsafeBytes(of: nonce) { nonceBytes in
        try withUTF8(of: context) { contextBytes in
          try AES.GCM.openRaw(
            nonce: UnsafeRawBufferPointer(rebasing: nonceBytes[..<AES.GCM.nonceByteCount]),
            ciphertext: UnsafeRawBufferPointer(ciphertext),
            tag: UnsafeRawBufferPointer(start: out + count, count: AES.GCM.tagByteCount), using: key.key,
            authenticating: UnsafeRawBufferPointer(rebasing: text[..<Marker.byteCount]), contextBytes,
            into: ciphertext)
        }
      }
      initialized = count
    }
  }
}
