/// RFC 4648 base64, standard alphabet with padding, canonical only.
///
/// The decoder accepts exactly one spelling of each byte string: the input
/// length must be a multiple of 4; only `A–Z a–z 0–9 + /` may appear, with
/// `=` only as one or two final padding characters; the unused low bits of
/// the last character before padding must be zero (so `QR==` is refused and
/// only `QQ==` decodes to "A"); white space, line breaks and URL-safe
/// characters are refused.
///
/// The codec is table-driven and *not* constant time: use it for public bytes
/// such as ciphertexts and ids, never for key material (key files use hex
/// decoded in locked memory).
public enum Base64 {
  private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
  private static let padding = UInt8(ascii: "=")
  /// Maps an ASCII byte to its 6-bit value, or 0xff when not in the alphabet.
  private static let values: [UInt8] = {
    var table = [UInt8](repeating: 0xff, count: 256)
    for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
    return table
  }()

  /// The length of the base64 text for `count` bytes.
  public static func encodedLength(of count: Int) -> Int {
    (count + 2) / 3 * 4
  }

  /// Encodes bytes as standard base64 with padding.
  public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
    encode(bytes, prefix: [])
  }

  /// `prefix` followed by the base64 of `bytes`, built in one allocation.
  static func encode(_ bytes: UnsafeRawBufferPointer, prefix: [UInt8]) -> String {
    let length = encodedLength(of: bytes.count)
    guard length + prefix.count > 0 else { return "" }
    return String(unsafeUninitializedCapacity: prefix.count + length) { whole in
      _ = whole.initialize(from: prefix)
      let out = UnsafeMutableBufferPointer(rebasing: whole[prefix.count...])
      alphabet.withUnsafeBufferPointer { table in
        var input = 0
        var output = 0
        let whole = bytes.count - bytes.count % 3
        while input < whole {
          let word = UInt32(bytes[input]) << 16 | UInt32(bytes[input + 1]) << 8 | UInt32(bytes[input + 2])
          out[output] = table[Int(word >> 18)]
          out[output + 1] = table[Int(word >> 12 & 0x3f)]
          out[output + 2] = table[Int(word >> 6 & 0x3f)]
          out[output + 3] = table[Int(word & 0x3f)]
          input += 3
          output += 4
        }
        switch bytes.count - whole {
        case 1:
          let word = UInt32(bytes[input]) << 16
          out[output] = table[Int(word >> 18)]
          out[output + 1] = table[Int(word >> 12 & 0x3f)]
          out[output + 2] = padding
          out[output + 3] = padding
        case 2:
          let word = UInt32(bytes[input]) << 16 | UInt32(bytes[input + 1]) << 8
          out[output] = table[Int(word >> 18)]
          out[output + 1] = table[Int(word >> 12 & 0x3f)]
          out[output + 2] = table[Int(word >> 6 & 0x3f)]
          out[output + 3] = padding
        default:
          break
        }
      }
      return prefix.count + length
    }
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
    if let result = text.utf8.withContiguousStorageIfAvailable({ decode(UnsafeRawBufferPointer($0)) }) {
      return result
    }
    return Array(text.utf8).withUnsafeBytes { decode($0) }
  }

  /// Decodes canonical standard base64 with padding from ASCII bytes.
  ///
  /// - Returns: the bytes, or nil when the input is not canonical base64.
  public static func decode(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
    guard text.count % 4 == 0 else { return nil }
    guard text.count > 0 else { return [] }
    let padded = text[text.count - 1] == padding ? (text[text.count - 2] == padding ? 2 : 1) : 0
    let count = text.count / 4 * 3 - padded
    var valid = true
    let out = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
      values.withUnsafeBufferPointer { table in
        var input = 0
        var output = 0
        // Every full group except the last, which may carry padding.
        let fullGroupsEnd = text.count - 4
        var bad: UInt8 = 0
        while input < fullGroupsEnd {
          let a = table[Int(text[input])]
          let b = table[Int(text[input + 1])]
          let c = table[Int(text[input + 2])]
          let d = table[Int(text[input + 3])]
          bad |= a | b | c | d
          let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
          out[output] = UInt8(truncatingIfNeeded: word >> 16)
          out[output + 1] = UInt8(truncatingIfNeeded: word >> 8)
          out[output + 2] = UInt8(truncatingIfNeeded: word)
          input += 4
          output += 3
        }
        // 0xff marks a character outside the alphabet; valid values are < 64.
        valid = bad & 0xc0 == 0
        let a = table[Int(text[input])]
        let b = table[Int(text[input + 1])]
        let c = padded == 2 ? 0 : table[Int(text[input + 2])]
        let d = padded >= 1 ? 0 : table[Int(text[input + 3])]
        if (a | b | c | d) & 0xc0 != 0 { valid = false }
        let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
        switch padded {
        case 2:
          // Canonical: the 4 unused bits of the second character are zero.
          if b & 0x0f != 0 { valid = false }
          out[output] = UInt8(truncatingIfNeeded: word >> 16)
        case 1:
          // Canonical: the 2 unused bits of the third character are zero.
          if c & 0x03 != 0 { valid = false }
          out[output] = UInt8(truncatingIfNeeded: word >> 16)
          out[output + 1] = UInt8(truncatingIfNeeded: word >> 8)
        default:
          out[output] = UInt8(truncatingIfNeeded: word >> 16)
          out[output + 1] = UInt8(truncatingIfNeeded: word >> 8)
          out[output + 2] = UInt8(truncatingIfNeeded: word)
        }
      }
      initialized = count
    }
    return valid ? out : nil
  }
}
