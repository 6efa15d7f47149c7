/// Lowercase hexadecimal, strict: the decoder accepts `0-9a-f` only, so a
/// value has exactly one spelling. The one hex codec of TaskKey.
public enum Hex {
  private static let digits: StaticString = "0123456789abcdef"

  /// The lowercase hex digit (ASCII) of the low four bits of `nibble`.
  @inline(__always)
  static func digit(_ nibble: UInt8) -> UInt8 {
    digits.utf8Start[Int(nibble & 0x0f)]
  }

  /// Writes the hex of `bytes` into the first `2 × bytes.count` bytes of
  /// `output`, with no copy in between: the one encoder, also for key
  /// material written straight into locked memory.
  static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
    precondition(output.count >= bytes.count * 2)
    for index in 0..<bytes.count {
      output[2 * index] = digit(bytes[index] >> 4)
      output[2 * index + 1] = digit(bytes[index])
    }
  }

  /// Encodes bytes as lowercase hex.
  static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
    String(unsafeUninitializedCapacity: bytes.count * 2) { out in
      encode(bytes, into: UnsafeMutableRawBufferPointer(out))
      return bytes.count * 2
    }
  }

  /// Encodes bytes as lowercase hex.
  public static func encode(_ bytes: [UInt8]) -> String {
    bytes.withUnsafeBytes { encode($0) }
  }

  /// The value of one lowercase hex digit, or nil. Branch-free over the
  /// digit so that decoding key material does not leak it through timing.
  @inline(__always)
  static func value(of ascii: UInt8) -> UInt8? {
    let (value, valid) = digit(ascii)
    if valid & 1 == 0 { return nil }
    return UInt8(truncatingIfNeeded: value)
  }

  /// The branch-free test under `value(of:)` and `keyIDValue(of:)`: the
  /// digit's value (0 when it is not one) and a mask that is all ones when
  /// `ascii` is a lowercase hex digit, else zero.
  @inline(__always)
  private static func digit(_ ascii: UInt8) -> (value: Int, valid: Int) {
    let c = Int(ascii)
    // Masks are all-ones when c is in range, else zero.
    let isDigit = ((0x2f - c) & (c - 0x3a)) >> 8
    let isLower = ((0x60 - c) & (c - 0x67)) >> 8
    return (((c - 0x30) & isDigit) | ((c - 0x57) & isLower), isDigit | isLower)
  }

  /// The value of exactly 8 lowercase hex digits (a key id), or nil: the
  /// branch-free digit test of `value(of:)` over all 8, one check at the end.
  @inline(__always)
  static func keyIDValue(of digits: UnsafeRawBufferPointer) -> UInt32? {
    precondition(digits.count == 8)
    var value: UInt32 = 0
    var valid = -1
    for index in 0..<8 {
      let (digitValue, digitValid) = digit(digits[index])
      valid &= digitValid
      value = value << 4 | UInt32(truncatingIfNeeded: digitValue)
    }
    return valid & 1 == 0 ? nil : value
  }

  /// Decodes exactly `output.count * 2` lowercase hex digits into `output`.
  /// Returns false, leaving `output` partly written, on any other input.
  static func decode(_ text: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
    guard text.count == output.count * 2 else { return false }
    var ok = true
    for index in 0..<output.count {
      let high = value(of: text[2 * index])
      let low = value(of: text[2 * index + 1])
      guard let high, let low else {
        ok = false
        break
      }
      output[index] = high << 4 | low
    }
    return ok
  }

  /// Decodes lowercase hex text into bytes.
  ///
  /// - Returns: the bytes, or nil for an odd length or any character
  ///   outside `0-9a-f`.
  public static func decode(_ text: String) -> [UInt8]? {
    let utf8 = Array(text.utf8)
    guard utf8.count % 2 == 0 else { return nil }
    var out = [UInt8](repeating: 0, count: utf8.count / 2)
    let ok = utf8.withUnsafeBytes { source in
      out.withUnsafeMutableBytes { decode(source, into: $0) }
    }
    return ok ? out : nil
  }
}
