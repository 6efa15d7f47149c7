import Foundation

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
    try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
  }

  /// The value as compact UTF-8 JSON with sorted keys and unescaped slashes.
  public var encoded: Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Every case encodes except a non-finite fraction, which the gate never makes.
    return (try? encoder.encode(self)) ?? Data("null".utf8)
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
