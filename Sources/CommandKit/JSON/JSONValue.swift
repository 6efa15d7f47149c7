/// A JSON value: what every `--json` output of the project is built as
/// (docs/json-output.md), and the wire type of the gate (JSON-RPC 2.0 and
/// MCP). `JSONDocument` reads it strictly; `encoded` writes it.
///
/// Integers and fractions are kept apart so that a JSON-RPC `id` of `1`
/// comes back as `1`, never `1.0`. Objects keep no key order; encoding sorts
/// keys, so equal values encode to equal bytes.
public enum JSONValue: Equatable, Sendable, Encodable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number without a fraction or exponent that fits in 64 bits.
  case integer(Int64)
  /// Any other number.
  case number(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object.
  case object([String: JSONValue])

  /// Encodes the value as it is.
  ///
  /// - Throws: `EncodingError` for a fraction that is not finite.
  public func encode(to encoder: Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .integer(let value): try container.encode(value)
    case .number(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }

  /// Parses UTF-8 JSON text with the strict reader (`JSONDocument`).
  ///
  /// - Parameter bytes: the text.
  /// - Returns: the value, or nil when the bytes are not one JSON value
  ///   the reader accepts.
  public static func parse(_ bytes: [UInt8]) -> JSONValue? {
    try? JSONDocument(parsing: bytes).value
  }

  /// An integer.
  public static func int(_ value: Int) -> JSONValue { .integer(Int64(value)) }

  /// A string, or null when `text` is nil.
  public static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

  /// An integer, or null when `value` is nil.
  public static func optional(_ value: Int?) -> JSONValue { value.map(JSONValue.int) ?? .null }

  /// An array of strings.
  public static func strings(_ texts: [String]) -> JSONValue { .array(texts.map(JSONValue.string)) }

  /// The value as compact UTF-8 JSON (RFC 8259) with object keys sorted
  /// and slashes unescaped; a fraction that is not finite (never made by
  /// the gate) is written `null`.
  public var encoded: [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(256)
    write(to: &bytes)
    return bytes
  }

  private func write(to out: inout [UInt8]) {
    switch self {
    case .null: out.append(contentsOf: "null".utf8)
    case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
    case .integer(let value): out.append(contentsOf: String(value).utf8)
    case .number(let value):
      if !value.isFinite {
        out.append(contentsOf: "null".utf8)
      } else if value == value.rounded(), abs(value) < 1e15 {
        out.append(contentsOf: String(Int64(value)).utf8)
      } else {
        out.append(contentsOf: "\(value)".utf8)
      }
    case .string(let value): Self.append(string: value, to: &out)
    case .array(let values):
      out.append(UInt8(ascii: "["))
      for (index, value) in values.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        value.write(to: &out)
      }
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      out.append(UInt8(ascii: "{"))
      // Sorted as pairs: the same order as the sorted keys, without a second lookup of each.
      for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        Self.append(string: member.key, to: &out)
        out.append(UInt8(ascii: ":"))
        member.value.write(to: &out)
      }
      out.append(UInt8(ascii: "}"))
    }
  }

  private static let hexDigits = Array("0123456789abcdef".utf8)

  /// Appends the JSON string token for `string`: the one escaper of the
  /// project. Quotes, `"` and `\` escaped; control characters as `\n`,
  /// `\r`, `\t`, `\b`, `\f` or `\u00xx`; every other character as its
  /// UTF-8 bytes (slashes and non-ASCII are not escaped).
  public static func append(string: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    var string = string
    string.withUTF8 { bytes in
      // Runs of bytes that need no escape are copied whole.
      var start = 0
      for index in bytes.indices {
        let byte = bytes[index]
        guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
        if start < index { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index])) }
        escape(byte, to: &out)
        start = index + 1
      }
      if start < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...])) }
    }
    out.append(UInt8(ascii: "\""))
  }

  /// Appends the escape of one byte that JSON does not allow bare in a string.
  private static func escape(_ byte: UInt8, to out: inout [UInt8]) {
    switch byte {
    case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
    case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
    case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
    case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
    case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
    case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
    case 0x0c: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
    case 0..<0x20:
      out.append(contentsOf: Array("\\u00".utf8))
      out.append(hexDigits[Int(byte >> 4)])
      out.append(hexDigits[Int(byte & 0xf)])
    default: out.append(byte)
    }
  }

  /// The value as compact JSON text (see `encoded`).
  public var text: String { String(decoding: encoded, as: UTF8.self) }

  /// The member `key` of an object; nil for a missing member or a non-object.
  public subscript(key: String) -> JSONValue? {
    if case .object(let members) = self { return members[key] }
    return nil
  }

  /// The string, if this is one.
  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// The integer, if this is one.
  public var integerValue: Int64? {
    if case .integer(let value) = self { return value }
    return nil
  }

  /// The members, if this is an object.
  public var objectValue: [String: JSONValue]? {
    if case .object(let value) = self { return value }
    return nil
  }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
  ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
  /// A string literal.
  public init(stringLiteral value: String) { self = .string(value) }
  /// An integer literal.
  public init(integerLiteral value: Int64) { self = .integer(value) }
  /// A Boolean literal.
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  /// An array literal.
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
  /// An object literal; a repeated key keeps the last value.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
  }
}
