/// UTF-8 validation without allocating (RFC 3629: no overlongs, no
/// surrogates, nothing above U+10FFFF).
public enum UTF8Check {
  /// Whether `bytes` are valid UTF-8.
  public static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
    var index = 0
    let count = bytes.count
    while index < count {
      // ASCII fast path, eight bytes at a time.
      if index + 8 <= count, bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
        index += 8
        continue
      }
      let lead = bytes[index]
      if lead < 0x80 {
        index += 1
        continue
      }
      let length: Int
      var low: UInt8 = 0x80
      var high: UInt8 = 0xbf
      switch lead {
      case 0xc2...0xdf: length = 2
      case 0xe0:
        length = 3
        low = 0xa0
      case 0xe1...0xec, 0xee...0xef: length = 3
      case 0xed:
        length = 3
        high = 0x9f
      case 0xf0:
        length = 4
        low = 0x90
      case 0xf1...0xf3: length = 4
      case 0xf4:
        length = 4
        high = 0x8f
      default: return false
      }
      guard index + length <= count else { return false }
      let second = bytes[index + 1]
      guard second >= low, second <= high else { return false }
      for offset in 2..<length where bytes[index + offset] & 0xc0 != 0x80 { return false }
      index += length
    }
    return true
  }
}
