import CTaskCrypto

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
/// decoded in locked memory). On a processor with SSSE3 the bulk of a text
/// goes through `CTaskCrypto`'s block loops (16 characters to 12 bytes and
/// back per step); the last groups, padding and every canonical-form check
/// stay in this Swift code, and the tests hold both paths to Foundation's
/// codec byte for byte.
public enum Base64 {
  private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
  private static let padding = UInt8(ascii: "=")
  /// Two characters per entry, for the 12-bit halves of a 3-byte group:
  /// entry `v` holds the characters of `v >> 6` and `v & 0x3f`, first
  /// character in the low byte, so one 32-bit store writes four characters.
  private static let pairs: [UInt16] = (0..<4096).map { value in
    UInt16(alphabet[value >> 6]) | UInt16(alphabet[value & 0x3f]) << 8
  }
  /// Decoding tables, one per character position in a group: entry `c` is
  /// that character's 6 bits already shifted to where they land in the
  /// group's 3 bytes (little-endian, first byte lowest), or
  /// `invalidEntry` (bit 24 set) when `c` is not in the alphabet. OR-ing
  /// the four entries gives the 3 bytes, with bit 24 set on any bad
  /// character.
  private static let invalidEntry: UInt32 = 0x01ff_ffff
  private static let decodeTables: [UInt32] = {
    var tables = [UInt32](repeating: invalidEntry, count: 4 * 256)
    for (index, character) in alphabet.enumerated() {
      let value = UInt32(index)
      let c = Int(character)
      tables[c] = value << 2
      tables[256 + c] = value >> 4 | (value & 0x0f) << 12
      tables[512 + c] = (value >> 2) << 8 | (value & 0x03) << 22
      tables[768 + c] = value << 16
    }
    return tables
  }()
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
    let length = encodedLength(of: bytes.count)
    guard length > 0 else { return "" }
    return String(unsafeUninitializedCapacity: length) { out in
      encode(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: bytes.count, into: out.baseAddress!)
      return length
    }
  }

  /// Writes the base64 of `bytes` into `output`, which must hold exactly
  /// `encodedLength(of: bytes.count)` bytes: for a secret (an HTTP Basic
  /// credential) whose text must stay in the caller's locked memory.
  ///
  /// - Returns: false, writing nothing, when `output` has another size.
  public static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
    guard output.count == encodedLength(of: bytes.count) else { return false }
    guard let input = bytes.baseAddress, let target = output.baseAddress else { return true }
    encode(
      input.assumingMemoryBound(to: UInt8.self), count: bytes.count, into: target.assumingMemoryBound(to: UInt8.self))
    return true
  }

  /// Encodes a byte array as standard base64 with padding.
  public static func encode(_ bytes: [UInt8]) -> String {
    bytes.withUnsafeBytes { encode($0) }
  }

  /// Writes the base64 of `count` bytes at `input` to `output`
  /// (`encodedLength(of: count)` bytes).
  ///
  /// The two regions may overlap when the input ends exactly where the
  /// output ends: each group of 3 bytes is read before its 4 characters are
  /// written, and a group's characters never reach input not yet read. This
  /// lets a sealed value be encrypted into the tail of its own text and
  /// encoded in place.
  static func encode(_ input: UnsafePointer<UInt8>, count: Int, into output: UnsafeMutablePointer<UInt8>) {
    var source = input
    var target = UnsafeMutableRawPointer(output)
    let end = input + (count - count % 3)
    // Whole 12-byte blocks in SSSE3 where the processor has it (each loads
    // 16 bytes, so at least 16 must remain); in place, each block is loaded
    // before its 16 characters are stored, and a store stays behind the
    // input still to be read (the output trails it by a third).
    let blocks = count >= 16 ? taskkey_base64_encode_blocks(input, count, output) : 0
    source += blocks
    target += blocks / 3 * 4
    pairs.withUnsafeBufferPointer { pairs in
      let pairs = pairs.baseAddress!
      // Six bytes to eight characters per step while eight bytes remain
      // to be read. In place, the output stays at least 2 bytes behind the
      // input here (see above), so the 8-byte store never reaches unread
      // input.
      while end - source >= 8 {
        let word = UInt64(bigEndian: UnsafeRawPointer(source).loadUnaligned(as: UInt64.self))
        let eight =
          UInt64(pairs[Int(truncatingIfNeeded: word >> 52)])
          | UInt64(pairs[Int(truncatingIfNeeded: word >> 40 & 0xfff)]) << 16
          | UInt64(pairs[Int(truncatingIfNeeded: word >> 28 & 0xfff)]) << 32
          | UInt64(pairs[Int(truncatingIfNeeded: word >> 16 & 0xfff)]) << 48
        target.storeBytes(of: UInt64(littleEndian: eight), as: UInt64.self)
        source += 6
        target += 8
      }
      while source < end {
        let word = Int(source[0]) << 16 | Int(source[1]) << 8 | Int(source[2])
        let four = UInt32(pairs[word >> 12]) | UInt32(pairs[word & 0xfff]) << 16
        target.storeBytes(of: UInt32(littleEndian: four), as: UInt32.self)
        source += 3
        target += 4
      }
    }
    let out = target.assumingMemoryBound(to: UInt8.self)
    alphabet.withUnsafeBufferPointer { table in
      switch count % 3 {
      case 1:
        let word = UInt32(source[0]) << 16
        out[0] = table[Int(word >> 18)]
        out[1] = table[Int(word >> 12 & 0x3f)]
        out[2] = padding
        out[3] = padding
      case 2:
        let word = UInt32(source[0]) << 16 | UInt32(source[1]) << 8
        out[0] = table[Int(word >> 18)]
        out[1] = table[Int(word >> 12 & 0x3f)]
        out[2] = table[Int(word >> 6 & 0x3f)]
        out[3] = padding
      default:
        break
      }
    }
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
    guard let count = decodedLength(of: text) else { return nil }
    var valid = true
    let out = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
      valid = count == 0 || decode(text, into: out.baseAddress!)
      initialized = count
    }
    return valid ? out : nil
  }

  /// The number of bytes `text` decodes to, judged from its length and
  /// padding only; nil when its length is not a multiple of 4.
  static func decodedLength(of text: UnsafeRawBufferPointer) -> Int? {
    guard text.count % 4 == 0 else { return nil }
    guard text.count > 0 else { return 0 }
    let padded = text[text.count - 1] == padding ? (text[text.count - 2] == padding ? 2 : 1) : 0
    return text.count / 4 * 3 - padded
  }

  /// Decodes non-empty `text` into `output`, which holds
  /// `decodedLength(of: text)` bytes.
  ///
  /// - Returns: false when `text` is not canonical base64; `output` is then
  ///   partly written.
  static func decode(_ text: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) -> Bool {
    guard let count = decodedLength(of: text), count > 0 || text.count > 0 else { return false }
    let padded = text.count / 4 * 3 - count
    var source = text.baseAddress!.assumingMemoryBound(to: UInt8.self)
    var target = output
    // Every full group except the last, which may carry padding. Each
    // step stores 4 bytes and advances 3; the extra byte is overwritten by
    // the next group, and the last group is always written below.
    let end = source + (text.count - 4)
    var badGroups: UInt32 = 0
    // Whole 16-character blocks in SSSE3 where the processor has it, while
    // at least 8 characters (a group and the last one) follow: each block
    // stores 16 bytes for its 12, and those 8 characters decode to at least
    // the 4 bytes of slack. It stops before a block with a bad byte, which
    // the loop below then finds.
    if text.count >= 24 {
      let blocks = taskkey_base64_decode_blocks(source, text.count - 8, target)
      source += blocks
      target += blocks / 4 * 3
    }
    decodeTables.withUnsafeBufferPointer { tables in
      let tables = tables.baseAddress!
      while source < end {
        let bytes =
          tables[Int(source[0])] | tables[256 + Int(source[1])] | tables[512 + Int(source[2])]
          | tables[768 + Int(source[3])]
        badGroups |= bytes
        UnsafeMutableRawPointer(target).storeBytes(of: UInt32(littleEndian: bytes), as: UInt32.self)
        source += 4
        target += 3
      }
    }
    return values.withUnsafeBufferPointer { table -> Bool in
      var bad: UInt8 = badGroups >> 24 == 0 ? 0 : 0xff
      // 0xff marks a character outside the alphabet; valid values are < 64.
      let a = table[Int(source[0])]
      let b = table[Int(source[1])]
      let c = padded == 2 ? 0 : table[Int(source[2])]
      let d = padded >= 1 ? 0 : table[Int(source[3])]
      bad |= a | b | c | d
      let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
      switch padded {
      case 2:
        // Canonical: the 4 unused bits of the second character are zero.
        if b & 0x0f != 0 { bad = 0xff }
        target[0] = UInt8(truncatingIfNeeded: word >> 16)
      case 1:
        // Canonical: the 2 unused bits of the third character are zero.
        if c & 0x03 != 0 { bad = 0xff }
        target[0] = UInt8(truncatingIfNeeded: word >> 16)
        target[1] = UInt8(truncatingIfNeeded: word >> 8)
      default:
        target[0] = UInt8(truncatingIfNeeded: word >> 16)
        target[1] = UInt8(truncatingIfNeeded: word >> 8)
        target[2] = UInt8(truncatingIfNeeded: word)
      }
      return bad & 0xc0 == 0
    }
  }
}
