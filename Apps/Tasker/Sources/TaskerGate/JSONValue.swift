import FoundationEssentials

/// A JSON value, as JSON-RPC 2.0 and MCP carry it: the wire type of the gate.
///
/// Integers and fractions are kept apart so that a JSON-RPC `id` of `1`
/// comes back as `1`, never `1.0`. Objects keep no key order; encoding sorts
/// keys, so equal values encode to equal bytes.
public enum JSONValue: Equatable, Sendable, Codable {
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

  /// Decodes one JSON value of any kind.
  ///
  /// - Throws: `DecodingError` when the input is not JSON.
  public init(from decoder: Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self) {
      self = .integer(value)
    } else if let value = try? container.decode(Double.self) {
      self = .number(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

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

  /// Parses UTF-8 JSON text.
  ///
  /// - Parameter bytes: the text.
  /// - Returns: the value, or nil when the bytes are not one JSON value.
  public static func parse<Bytes: DataProtocol>(_ bytes: Bytes) -> JSONValue? {
    // JSONParser.swift: strict RFC 8259, the kinds kept apart as above.
    JSONParser.parse(Array(bytes))
  }

  /// The value as compact UTF-8 JSON (RFC 8259) with object keys sorted
  /// and slashes unescaped; a fraction that is not finite (never made by
  /// the gate) is written `null`.
  public var encoded: Data {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(256)
    write(to: &bytes)
    return Data(bytes)
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
    case .string(let value): Self.write(string: value, to: &out)
    case .array(let values):
      out.append(UInt8(ascii: "["))
      for (index, value) in values.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        value.write(to: &out)
      }
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      out.append(UInt8(ascii: "{"))
      for (index, key) in members.keys.sorted().enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        Self.write(string: key, to: &out)
        out.append(UInt8(ascii: ":"))
        members[key]?.write(to: &out)
      }
      out.append(UInt8(ascii: "}"))
    }
  }

  private static let hexDigits = Array("0123456789abcdef".utf8)

  private static func write(string: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
      case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
      case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
      case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
      case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
      case 0..<0x20:
        out.append(contentsOf: Array("\\u00".utf8))
        out.append(hexDigits[Int(byte >> 4)])
        out.append(hexDigits[Int(byte & 0xf)])
      default: out.append(byte)
      }
    }
    out.append(UInt8(ascii: "\""))
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
