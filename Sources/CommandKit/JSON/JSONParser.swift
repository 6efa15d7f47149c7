/// The one strict JSON reader of the project (RFC 8259), for every input a
/// command or the gate takes: UTF-8 only (checked first, no repair),
/// exactly one value with white space around it and nothing else, no
/// trailing commas, comments, leading zeros, `NaN` or infinities, control
/// characters only escaped, `\u` escapes paired into scalars (a lone
/// surrogate is refused: it has no UTF-8 form), at most `maximumDepth`
/// nested arrays and objects, and no object that repeats a member name at
/// any depth (names compared after unescaping: RFC 8259 leaves a repeated
/// name's meaning to each reader, and a check must never depend on which
/// copy a reader keeps).
///
/// It also records where each top-level member's value lies in the input,
/// so a command can replace one value and keep every other byte of a line
/// as it came (`taskkey seal --field`).
public struct JSONDocument {
  /// The deepest nesting of arrays and objects accepted.
  public static let maximumDepth = 64

  /// The value the input holds.
  public let value: JSONValue
  /// For a top-level object: each member's name and the byte range of its
  /// value's token in the input (a string's quotes included).
  public let memberRanges: [String: Range<Int>]

  /// Parses `bytes`.
  ///
  /// - Throws: `JSONError` naming the first defect and its byte offset
  ///   (never the input's text).
  public init(parsing bytes: UnsafeRawBufferPointer) throws {
    guard UTF8Check.isValid(bytes) else { throw JSONError(reason: "not valid UTF-8") }
    var parser = Parser(bytes: bytes)
    parser.skipWhiteSpace()
    let value = try parser.value(depth: 0, topLevel: true)
    parser.skipWhiteSpace()
    guard parser.index == bytes.count else {
      throw JSONError(reason: "text after the JSON value at byte \(parser.index + 1)")
    }
    self.value = value
    self.memberRanges = parser.ranges
  }

  /// Parses `bytes`.
  ///
  /// - Throws: `JSONError`.
  public init(parsing bytes: [UInt8]) throws {
    self = try bytes.withUnsafeBytes { try JSONDocument(parsing: $0) }
  }
}

/// Why input is not one JSON value this reader accepts. The reason names
/// the defect and a byte offset, never the text.
public struct JSONError: Error, Equatable, CommandFailure {
  /// What is wrong.
  public let reason: String

  /// A refusal.
  public init(reason: String) { self.reason = reason }

  /// `.dataError` (65).
  public var exitCode: ExitCode { .dataError }
  /// `not JSON: …`.
  public var message: String { "not JSON this reader accepts: \(reason)" }
  /// None.
  public var hint: String? { nil }
}

private struct Parser {
  let bytes: UnsafeRawBufferPointer
  var index = 0
  var ranges: [String: Range<Int>] = [:]

  var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  mutating func skipWhiteSpace() {
    while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d { index += 1 }
  }

  mutating func take(_ byte: UInt8) -> Bool {
    guard current == byte else { return false }
    index += 1
    return true
  }

  func failure(_ what: String) -> JSONError { JSONError(reason: "\(what) at byte \(index + 1)") }

  mutating func value(depth: Int, topLevel: Bool = false) throws -> JSONValue {
    guard let byte = current else { throw failure("expected a value") }
    switch byte {
    case UInt8(ascii: "{"): return try object(depth: depth + 1, topLevel: topLevel)
    case UInt8(ascii: "["): return try array(depth: depth + 1)
    case UInt8(ascii: "\""): return .string(try string())
    case UInt8(ascii: "t"): return try literal("true", .bool(true))
    case UInt8(ascii: "f"): return try literal("false", .bool(false))
    case UInt8(ascii: "n"): return try literal("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
    default: throw failure("unexpected character")
    }
  }

  mutating func literal(_ word: StaticString, _ value: JSONValue) throws -> JSONValue {
    let count = word.utf8CodeUnitCount
    guard index + count <= bytes.count,
      UnsafeRawBufferPointer(rebasing: bytes[index..<index + count]).elementsEqual(
        UnsafeBufferPointer(start: word.utf8Start, count: count))
    else { throw failure("unexpected value") }
    index += count
    return value
  }

  mutating func array(depth: Int) throws -> JSONValue {
    guard depth <= JSONDocument.maximumDepth else { throw failure("nested deeper than \(JSONDocument.maximumDepth)") }
    index += 1
    var values: [JSONValue] = []
    skipWhiteSpace()
    if take(UInt8(ascii: "]")) { return .array(values) }
    while true {
      skipWhiteSpace()
      values.append(try value(depth: depth))
      skipWhiteSpace()
      if take(UInt8(ascii: ",")) { continue }
      guard take(UInt8(ascii: "]")) else { throw failure("expected ',' or ']'") }
      return .array(values)
    }
  }

  mutating func object(depth: Int, topLevel: Bool) throws -> JSONValue {
    guard depth <= JSONDocument.maximumDepth else { throw failure("nested deeper than \(JSONDocument.maximumDepth)") }
    index += 1
    var members: [String: JSONValue] = [:]
    skipWhiteSpace()
    if take(UInt8(ascii: "}")) { return .object(members) }
    while true {
      skipWhiteSpace()
      guard current == UInt8(ascii: "\"") else { throw failure("expected a member name") }
      let name = try string()
      skipWhiteSpace()
      guard take(UInt8(ascii: ":")) else { throw failure("expected ':'") }
      skipWhiteSpace()
      let start = index
      let member = try value(depth: depth)
      guard members.updateValue(member, forKey: name) == nil else {
        throw JSONError(reason: "a member name appears twice in one object, before byte \(index + 1)")
      }
      if topLevel { ranges[name] = start..<index }
      skipWhiteSpace()
      if take(UInt8(ascii: ",")) { continue }
      guard take(UInt8(ascii: "}")) else { throw failure("expected ',' or '}'") }
      return .object(members)
    }
  }

  /// A string token; the input is valid UTF-8 already, so unescaped runs
  /// are copied as they are.
  mutating func string() throws -> String {
    let start = index
    index += 1
    // Most strings have no escape: their bytes (UTF-8, checked before parsing) are the string's.
    var end = index
    while end < bytes.count {
      let byte = bytes[end]
      if byte == UInt8(ascii: "\"") {
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self)
        index = end + 1
        return text
      }
      if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
      end += 1
    }
    var utf8 = Array(bytes[index..<end])
    index = end
    while let byte = current {
      index += 1
      switch byte {
      case UInt8(ascii: "\""): return String(decoding: utf8, as: UTF8.self)
      case 0..<0x20: throw JSONError(reason: "control character in a string at byte \(index)")
      case UInt8(ascii: "\\"):
        guard let escaped = current else { break }
        index += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0c)
        case UInt8(ascii: "n"): utf8.append(0x0a)
        case UInt8(ascii: "r"): utf8.append(0x0d)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"): utf8.append(contentsOf: String(Character(try unicodeEscape())).utf8)
        default: throw JSONError(reason: "bad escape at byte \(index)")
        }
      default: utf8.append(byte)
      }
    }
    throw JSONError(reason: "unterminated string at byte \(start + 1)")
  }

  /// The scalar of a `\u` escape (its `\u` already read), pairing a high
  /// surrogate with the `\u` low surrogate that must follow it.
  mutating func unicodeEscape() throws -> Unicode.Scalar {
    let first = try hexQuad()
    switch first {
    case 0xD800...0xDBFF:
      guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")) else { throw failure("lone surrogate in a \\u escape") }
      let second = try hexQuad()
      guard (0xDC00...0xDFFF).contains(second) else { throw failure("lone surrogate in a \\u escape") }
      return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
    case 0xDC00...0xDFFF: throw failure("lone surrogate in a \\u escape")
    default: return Unicode.Scalar(first)!
    }
  }

  mutating func hexQuad() throws -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard let byte = current, let digit = Self.hexValue(byte) else { throw failure("bad \\u escape") }
      value = value << 4 | digit
      index += 1
    }
    return value
  }

  static func hexValue(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
    default: return nil
    }
  }

  /// A number: an integer when it has no fraction or exponent, is not
  /// `-0` and fits in 64 bits, else a finite `Double`.
  mutating func number() throws -> JSONValue {
    let start = index
    _ = take(UInt8(ascii: "-"))
    if !take(UInt8(ascii: "0")) {
      guard digits() > 0 else { throw failure("malformed number") }
    } else if let next = current, next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9") {
      throw failure("leading zero in a number")
    }
    var whole = true
    if take(UInt8(ascii: ".")) {
      whole = false
      guard digits() > 0 else { throw failure("malformed number") }
    }
    if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
      whole = false
      _ = take(UInt8(ascii: "+")) || take(UInt8(ascii: "-"))
      guard digits() > 0 else { throw failure("malformed number") }
    }
    let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    // `-0` is not an integer's spelling: it stays the number it is.
    if whole, text != "-0", let integer = Int64(text) { return .integer(integer) }
    guard let number = Double(text), number.isFinite else { throw failure("number out of range") }
    return .number(number)
  }

  mutating func digits() -> Int {
    let start = index
    while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
    return index - start
  }
}
