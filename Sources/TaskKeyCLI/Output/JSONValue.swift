import FoundationEssentials

/// A JSON value built field by field (where output is not one `Codable`
/// type): encoded by `JSONEncoder`, keys sorted, nulls kept. Stands in for
/// `JSONSerialization`, whose Foundation code costs every `taskkey` process
/// start-up time (issue 14, goal 6).
enum JSONValue: Encodable {
  case string(String)
  case int(Int)
  case null
  case array([JSONValue])
  case object([String: JSONValue])

  /// A string, or null when `text` is nil.
  static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

  /// An array of strings.
  static func strings(_ texts: [String]) -> JSONValue { .array(texts.map(JSONValue.string)) }

  func encode(to encoder: Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .string(let text): try container.encode(text)
    case .int(let number): try container.encode(number)
    case .null: try container.encodeNil()
    case .array(let values): try container.encode(values)
    case .object(let fields): try container.encode(fields)
    }
  }

  /// The compact JSON text: sorted keys, slashes not escaped.
  func text() throws -> String { String(decoding: try bytes(), as: UTF8.self) }

  /// The compact JSON text as UTF-8.
  func bytes() throws -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return Array(try encoder.encode(self))
  }
}
