import CSodium

/// RFC 4648 base64, standard alphabet with padding, canonical only.
///
/// Decoding goes through libsodium's `sodium_base642bin` with the ORIGINAL
/// variant and no ignore set, which refuses missing or extra padding,
/// non-zero trailing bits (`QR==`), white space and any other character;
/// the result is then re-encoded and compared, so exactly one spelling of
/// each byte string is ever accepted.
public enum Base64 {
  /// Encodes bytes as standard base64 with padding.
  public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
    ensureSodium()
    let variant = Int32(sodium_base64_VARIANT_ORIGINAL)
    let capacity = sodium_base64_encoded_len(bytes.count, variant)  // includes the NUL
    var out = [CChar](repeating: 0, count: capacity)
    let source = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
    out.withUnsafeMutableBufferPointer { buffer in
      _ = sodium_bin2base64(buffer.baseAddress!, capacity, source, bytes.count, variant)
    }
    return String(decoding: out.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Encodes a byte array as standard base64 with padding.
  public static func encode(_ bytes: [UInt8]) -> String {
    bytes.withUnsafeBytes { encode($0) }
  }

  /// Decodes canonical standard base64 with padding.
  ///
  /// - Returns: the bytes, or nil when `text` is not the one canonical
  ///   encoding of some byte string.
  public static func decode<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
    let input = Array(text.utf8)
    guard input.count % 4 == 0 else { return nil }
    ensureSodium()
    let maximum = input.count / 4 * 3
    // One spare byte keeps the buffer non-empty for an empty input.
    var out = [UInt8](repeating: 0, count: maximum + 1)
    var length = 0
    let result = input.withUnsafeBufferPointer { source in
      source.withMemoryRebound(to: CChar.self) { chars in
        out.withUnsafeMutableBufferPointer { target in
          sodium_base642bin(
            target.baseAddress!, maximum, chars.baseAddress, chars.count, nil, &length, nil,
            Int32(sodium_base64_VARIANT_ORIGINAL))
        }
      }
    }
    guard result == 0, length <= maximum else { return nil }
    out.removeLast(maximum + 1 - length)
    // Belt and braces: exactly one spelling per byte string.
    guard Array(encode(out).utf8) == input else { return nil }
    return out
  }
}
