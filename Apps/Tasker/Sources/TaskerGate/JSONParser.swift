/// A strict RFC 8259 parser for `JSONValue`, for the untrusted bodies the
/// gate reads: UTF-8 only, one value of any kind (with white space around
/// it) and nothing else, no trailing commas, comments, leading zeros, `NaN`
/// or infinities, control characters only escaped, `\u` escapes paired into
/// scalars (a lone surrogate is an error), and at most `maximumDepth`
/// nested arrays and objects. An object that repeats a key (compared after
/// unescaping) is refused: RFC 8259 leaves its meaning to each parser, and a
/// key check must never depend on which copy a reader keeps.
struct JSONParser {
  /// The deepest nesting of arrays and objects accepted.
  static let maximumDepth = 512

  private let bytes: [UInt8]
  private var index = 0

  private init(_ bytes: [UInt8]) {
    self.bytes = bytes
  }

  /// The value `bytes` hold, or nil when they are not exactly one JSON value.
  static func parse(_ bytes: [UInt8]) -> JSONValue? {
    var parser = JSONParser(bytes)
    guard let value = parser.value(depth: 0) else { return nil }
    parser.skipWhiteSpace()
    return parser.index == bytes.count ? value : nil
  }

  private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  private mutating func skipWhiteSpace() {
    while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d { index += 1 }
  }

  /// Consumes `byte` if it is next.
  private mutating func take(_ byte: UInt8) -> Bool {
    guard current == byte else { return false }
    index += 1
    return true
  }

  private mutating func value(depth: Int) -> JSONValue? {
    skipWhiteSpace()
    guard let byte = current else { return nil }
    switch byte {
    case UInt8(ascii: "{"): return object(depth: depth + 1)
    case UInt8(ascii: "["): return array(depth: depth + 1)
    case UInt8(ascii: "\""): return string().map(JSONValue.string)
    case UInt8(ascii: "t"): return literal("true", .bool(true))
    case UInt8(ascii: "f"): return literal("false", .bool(false))
    case UInt8(ascii: "n"): return literal("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
    default: return nil
    }
  }

  private mutating func literal(_ word: String, _ value: JSONValue) -> JSONValue? {
    for byte in word.utf8 where !take(byte) { return nil }
    return value
  }

  private mutating func array(depth: Int) -> JSONValue? {
    guard depth <= Self.maximumDepth, take(UInt8(ascii: "[")) else { return nil }
    var values: [JSONValue] = []
    skipWhiteSpace()
    if take(UInt8(ascii: "]")) { return .array(values) }
    while true {
      guard let value = value(depth: depth) else { return nil }
      values.append(value)
      skipWhiteSpace()
      if take(UInt8(ascii: ",")) { continue }
      return take(UInt8(ascii: "]")) ? .array(values) : nil
    }
  }

  private mutating func object(depth: Int) -> JSONValue? {
    guard depth <= Self.maximumDepth, take(UInt8(ascii: "{")) else { return nil }
    var members: [String: JSONValue] = [:]
    skipWhiteSpace()
    if take(UInt8(ascii: "}")) { return .object(members) }
    while true {
      skipWhiteSpace()
      guard current == UInt8(ascii: "\""), let key = string() else { return nil }
      skipWhiteSpace()
      guard take(UInt8(ascii: ":")), let value = value(depth: depth), members[key] == nil else { return nil }
      members[key] = value
      skipWhiteSpace()
      if take(UInt8(ascii: ",")) { continue }
      return take(UInt8(ascii: "}")) ? .object(members) : nil
    }
  }

  private mutating func string() -> String? {
    guard take(UInt8(ascii: "\"")) else { return nil }
    var utf8: [UInt8] = []
    while let byte = current {
      index += 1
      switch byte {
      case UInt8(ascii: "\""): return String(validating: utf8, as: UTF8.self)
      case 0..<0x20: return nil
      case UInt8(ascii: "\\"):
        guard let escaped = current else { return nil }
        index += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0c)
        case UInt8(ascii: "n"): utf8.append(0x0a)
        case UInt8(ascii: "r"): utf8.append(0x0d)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
          guard let scalar = unicodeEscape() else { return nil }
          utf8.append(contentsOf: String(Character(scalar)).utf8)
        default: return nil
        }
      default: utf8.append(byte)
      }
    }
    return nil
  }

  /// The scalar of a `\u` escape (its `\u` already read), pairing a high
  /// surrogate with the `\u` low surrogate that must follow it.
  private mutating func unicodeEscape() -> Unicode.Scalar? {
    guard let first = hexQuad() else { return nil }
    switch first {
    case 0xD800...0xDBFF:
      guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let second = hexQuad(),
        (0xDC00...0xDFFF).contains(second)
      else { return nil }
      return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
    case 0xDC00...0xDFFF: return nil
    default: return Unicode.Scalar(first)
    }
  }

  private mutating func hexQuad() -> UInt32? {
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard let byte = current, let digit = Self.hexValue(byte) else { return nil }
      value = value << 4 | digit
      index += 1
    }
    return value
  }

  private static func hexValue(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
    default: return nil
    }
  }

  /// A number: an integer when it has no fraction or exponent, is not
  /// `-0` and fits in 64 bits, else a finite `Double`.
  private mutating func number() -> JSONValue? {
    let start = index
    _ = take(UInt8(ascii: "-"))
    if !take(UInt8(ascii: "0")) {
      guard digits() > 0 else { return nil }
    }
    var whole = true
    if take(UInt8(ascii: ".")) {
      whole = false
      guard digits() > 0 else { return nil }
    }
    if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
      whole = false
      _ = take(UInt8(ascii: "+")) || take(UInt8(ascii: "-"))
      guard digits() > 0 else { return nil }
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    // `-0` is not an integer's spelling: it stays the number it is.
    if whole, text != "-0", let integer = Int64(text) { return .integer(integer) }
    guard let number = Double(text), number.isFinite else { return nil }
    return .number(number)
  }

  /// Consumes decimal digits; how many.
  private mutating func digits() -> Int {
    let start = index
    while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
    return index - start
  }
}
