/// Turns an `Encodable` value into a `JSONValue` the project's way
/// (docs/json-output.md): member names converted to snake_case
/// (`keyID` → `key_id`, `byteCount` → `byte_count`), an optional that is
/// nil written as an explicit `null` (never left out), a `JSONValue`
/// inside kept as it is. Output then goes through the one writer,
/// `JSONValue.encoded`.
public enum JSONValueEncoder {
  /// The JSON value of `value`.
  ///
  /// - Throws: `EncodingError.invalidValue` for a fraction that is not
  ///   finite, or a value that encodes nothing.
  public static func value<T: Encodable>(of value: T) throws -> JSONValue {
    if let json = value as? JSONValue { return json }
    return try encodeChild(value, path: [])
  }

  /// `keyID` → `key_id`: an underscore before an upper-case letter that
  /// follows a lower-case letter or digit, or that ends a run of capitals
  /// before a lower-case letter (`myURLValue` → `my_url_value`); then
  /// everything lower-case.
  public static func snakeCase(_ name: String) -> String {
    let characters = Array(name)
    var result = ""
    for (index, character) in characters.enumerated() {
      if character.isUppercase, index > 0 {
        let previous = characters[index - 1]
        let next = index + 1 < characters.count ? characters[index + 1] : nil
        if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
          result.append("_")
        }
      }
      result += character.lowercased()
    }
    return result
  }
}

/// Where a container puts what it built.
private final class Box {
  var value: JSONValue?
  var members: [String: Box] = [:]
  var elements: [Box] = []
  var kind: Kind = .single

  enum Kind { case single, object, array }

  func resolved() -> JSONValue {
    switch kind {
    case .single: return value ?? .null
    case .object: return .object(members.mapValues { $0.resolved() })
    case .array: return .array(elements.map { $0.resolved() })
    }
  }
}

private struct ValueEncoder: Encoder {
  let box: Box
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    box.kind = .object
    return KeyedEncodingContainer(KeyedContainer<Key>(box: box, codingPath: codingPath))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    box.kind = .array
    return UnkeyedContainer(box: box, codingPath: codingPath)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    SingleContainer(box: box, codingPath: codingPath)
  }
}

/// Encodes one value into a fresh box and returns its JSON.
private func encodeChild<T: Encodable>(_ value: T, path: [any CodingKey]) throws -> JSONValue {
  if let json = value as? JSONValue { return json }
  let box = Box()
  try value.encode(to: ValueEncoder(box: box, codingPath: path))
  return box.resolved()
}

/// A whole number of any width, as a JSON integer (64-bit signed range).
private func integer<T: BinaryInteger>(_ value: T, path: [any CodingKey]) throws -> JSONValue {
  guard let exact = Int64(exactly: value) else {
    throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "outside the 64-bit range"))
  }
  return .integer(exact)
}

private func number(_ value: Double, path: [any CodingKey]) throws -> JSONValue {
  guard value.isFinite else {
    throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "not a finite number"))
  }
  return .number(value)
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let box: Box
  let codingPath: [any CodingKey]

  func put(_ value: JSONValue, _ key: Key) {
    let child = Box()
    child.value = value
    box.members[JSONValueEncoder.snakeCase(key.stringValue)] = child
  }

  mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
  mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
  mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
  mutating func encode(_ value: Double, forKey key: Key) throws { put(try number(value, path: codingPath), key) }
  mutating func encode(_ value: Float, forKey key: Key) throws { put(try number(Double(value), path: codingPath), key) }
  mutating func encode(_ value: Int, forKey key: Key) throws { put(try integer(value, path: codingPath), key) }
  mutating func encode(_ value: Int8, forKey key: Key) throws { put(try integer(value, path: codingPath), key) }
  mutating func encode(_ value: Int16, forKey key: Key) throws { put(try integer(value, path: codingPath), key) }
  mutating func encode(_ value: Int32, forKey key: Key) throws { put(try integer(value, path: codingPath), key) }
  mutating func encode(_ value: Int64, forKey key: Key) throws { put(try integer(value, path: codingPath), key) }
  mutating func encode(_ value: UInt, forKey key: Key) throws { put(try integer(value, path: codingPath), key) }
  mutating func encode(_ value: UInt8, forKey key: Key) throws { put(try integer(value, path: codingPath), key) }
  mutating func encode(_ value: UInt16, forKey key: Key) throws { put(try integer(value, path: codingPath), key) }
  mutating func encode(_ value: UInt32, forKey key: Key) throws { put(try integer(value, path: codingPath), key) }
  mutating func encode(_ value: UInt64, forKey key: Key) throws { put(try integer(value, path: codingPath), key) }
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    put(try encodeChild(value, path: codingPath + [key]), key)
  }

  // Explicit nulls: the synthesized `encode(to:)` calls these for optionals.
  mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { put(.optional(value), key) }
  mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { put(value.map(JSONValue.bool) ?? .null, key) }
  mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
    put(try value.map { try integer($0, path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
    put(try value.map { try integer($0, path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
    put(try value.map { try integer($0, path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
    put(try value.map { try integer($0, path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
    put(try value.map { try integer($0, path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
    put(try value.map { try integer($0, path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
    put(try value.map { try integer($0, path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
    put(try value.map { try integer($0, path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
    put(try value.map { try integer($0, path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
    put(try value.map { try integer($0, path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
    put(try value.map { try number($0, path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
    put(try value.map { try number(Double($0), path: codingPath) } ?? .null, key)
  }
  mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
    put(try value.map { try encodeChild($0, path: codingPath + [key]) } ?? .null, key)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
    -> KeyedEncodingContainer<NestedKey>
  {
    let child = Box()
    child.kind = .object
    box.members[JSONValueEncoder.snakeCase(key.stringValue)] = child
    return KeyedEncodingContainer(KeyedContainer<NestedKey>(box: child, codingPath: codingPath + [key]))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let child = Box()
    child.kind = .array
    box.members[JSONValueEncoder.snakeCase(key.stringValue)] = child
    return UnkeyedContainer(box: child, codingPath: codingPath + [key])
  }

  mutating func superEncoder() -> any Encoder { ValueEncoder(box: box, codingPath: codingPath) }
  mutating func superEncoder(forKey key: Key) -> any Encoder {
    let child = Box()
    box.members[JSONValueEncoder.snakeCase(key.stringValue)] = child
    return ValueEncoder(box: child, codingPath: codingPath + [key])
  }
}

private struct IndexKey: CodingKey {
  let intValue: Int?
  var stringValue: String { String(intValue ?? 0) }
  init(_ index: Int) { intValue = index }
  init?(stringValue: String) { nil }
  init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
  let box: Box
  let codingPath: [any CodingKey]
  var count: Int { box.elements.count }

  func append(_ value: JSONValue) {
    let child = Box()
    child.value = value
    box.elements.append(child)
  }

  mutating func encodeNil() throws { append(.null) }
  mutating func encode(_ value: Bool) throws { append(.bool(value)) }
  mutating func encode(_ value: String) throws { append(.string(value)) }
  mutating func encode(_ value: Double) throws { append(try number(value, path: codingPath)) }
  mutating func encode(_ value: Float) throws { append(try number(Double(value), path: codingPath)) }
  mutating func encode(_ value: Int) throws { append(try integer(value, path: codingPath)) }
  mutating func encode(_ value: Int8) throws { append(try integer(value, path: codingPath)) }
  mutating func encode(_ value: Int16) throws { append(try integer(value, path: codingPath)) }
  mutating func encode(_ value: Int32) throws { append(try integer(value, path: codingPath)) }
  mutating func encode(_ value: Int64) throws { append(try integer(value, path: codingPath)) }
  mutating func encode(_ value: UInt) throws { append(try integer(value, path: codingPath)) }
  mutating func encode(_ value: UInt8) throws { append(try integer(value, path: codingPath)) }
  mutating func encode(_ value: UInt16) throws { append(try integer(value, path: codingPath)) }
  mutating func encode(_ value: UInt32) throws { append(try integer(value, path: codingPath)) }
  mutating func encode(_ value: UInt64) throws { append(try integer(value, path: codingPath)) }
  mutating func encode<T: Encodable>(_ value: T) throws {
    append(try encodeChild(value, path: codingPath + [IndexKey(count)]))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
    -> KeyedEncodingContainer<NestedKey>
  {
    let child = Box()
    child.kind = .object
    box.elements.append(child)
    return KeyedEncodingContainer(KeyedContainer<NestedKey>(box: child, codingPath: codingPath + [IndexKey(count)]))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let child = Box()
    child.kind = .array
    box.elements.append(child)
    return UnkeyedContainer(box: child, codingPath: codingPath + [IndexKey(count)])
  }

  mutating func superEncoder() -> any Encoder {
    let child = Box()
    box.elements.append(child)
    return ValueEncoder(box: child, codingPath: codingPath)
  }
}

private struct SingleContainer: SingleValueEncodingContainer {
  let box: Box
  let codingPath: [any CodingKey]

  mutating func encodeNil() throws { box.value = .null }
  mutating func encode(_ value: Bool) throws { box.value = .bool(value) }
  mutating func encode(_ value: String) throws { box.value = .string(value) }
  mutating func encode(_ value: Double) throws { box.value = try number(value, path: codingPath) }
  mutating func encode(_ value: Float) throws { box.value = try number(Double(value), path: codingPath) }
  mutating func encode(_ value: Int) throws { box.value = try integer(value, path: codingPath) }
  mutating func encode(_ value: Int8) throws { box.value = try integer(value, path: codingPath) }
  mutating func encode(_ value: Int16) throws { box.value = try integer(value, path: codingPath) }
  mutating func encode(_ value: Int32) throws { box.value = try integer(value, path: codingPath) }
  mutating func encode(_ value: Int64) throws { box.value = try integer(value, path: codingPath) }
  mutating func encode(_ value: UInt) throws { box.value = try integer(value, path: codingPath) }
  mutating func encode(_ value: UInt8) throws { box.value = try integer(value, path: codingPath) }
  mutating func encode(_ value: UInt16) throws { box.value = try integer(value, path: codingPath) }
  mutating func encode(_ value: UInt32) throws { box.value = try integer(value, path: codingPath) }
  mutating func encode(_ value: UInt64) throws { box.value = try integer(value, path: codingPath) }
  mutating func encode<T: Encodable>(_ value: T) throws { box.value = try encodeChild(value, path: codingPath) }
}
