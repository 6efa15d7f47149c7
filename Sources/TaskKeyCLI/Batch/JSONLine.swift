import TaskCrypto

/// One line of JSON lines, read without building a tree: the whole line is
/// checked against the JSON grammar (RFC 8259: one object, UTF-8, no
/// duplicate names at the top level for the members asked for) and the
/// top-level members asked for are found with their byte ranges, so a new
/// value can be put in place while every other byte of the line stays as
/// it came.
struct JSONLine {
  /// A top-level member's value.
  enum Member: Equatable {
    /// The object has no member of that name.
    case missing
    /// The member is `null`.
    case null
    /// The member is a string: its decoded value, and the byte range of the
    /// whole string token (quotes included) in the line.
    case string(String, token: Range<Int>)
    /// The member is a number, boolean, object or array.
    case other
  }

  /// The deepest nesting of objects and arrays accepted.
  static let maximumDepth = 64

  /// Scans `line` and returns the members named `names`, in that order.
  ///
  /// - Throws: `JSONLine.Malformed` naming the defect.
  static func members(of line: UnsafeRawBufferPointer, named names: [[UInt8]]) throws -> [Member] {
    guard UTF8Check.isValid(line) else { throw Malformed(reason: "not valid UTF-8") }
    var scanner = Scanner(bytes: line, names: names)
    scanner.skipSpace()
    guard scanner.peek() == UInt8(ascii: "{") else { throw Malformed(reason: "not a JSON object") }
    try scanner.value(depth: 0)
    scanner.skipSpace()
    guard scanner.position == line.count else { throw Malformed(reason: "text after the JSON object") }
    return scanner.found
  }

  /// The JSON string token for `text`: quotes, `"` and `\` escaped, control
  /// characters as `\n`, `\t`, `\r`, `\b`, `\f` or `\u00XX`, and every
  /// other character as its UTF-8 bytes.
  static func encode(_ text: String, into output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
      case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
      case 0x0a: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
      case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
      case 0x0d: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
      case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
      case 0x0c: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
      case 0..<0x20:
        output.append(contentsOf: Array("\\u00\(Hex.encode([byte]))".utf8))
      default: output.append(byte)
      }
    }
    output.append(UInt8(ascii: "\""))
  }

  /// Why a line is not a JSON object this reader accepts.
  struct Malformed: Error, Equatable {
    /// What is wrong, without repeating the line.
    let reason: String
  }

  private struct Scanner {
    let bytes: UnsafeRawBufferPointer
    let names: [[UInt8]]
    var found: [Member]
    var position = 0

    init(bytes: UnsafeRawBufferPointer, names: [[UInt8]]) {
      self.bytes = bytes
      self.names = names
      self.found = Array(repeating: .missing, count: names.count)
    }

    func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func skipSpace() {
      while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0d || byte == 0x0a { position += 1 }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws {
      guard peek() == byte else { throw Malformed(reason: "expected \(what) at byte \(position + 1)") }
      position += 1
    }

    mutating func value(depth: Int) throws {
      guard depth < JSONLine.maximumDepth else {
        throw Malformed(reason: "nested deeper than \(JSONLine.maximumDepth)")
      }
      switch peek() {
      case UInt8(ascii: "{"): try object(depth: depth)
      case UInt8(ascii: "["): try array(depth: depth)
      case UInt8(ascii: "\""): _ = try string()
      case UInt8(ascii: "t"): try literal("true")
      case UInt8(ascii: "f"): try literal("false")
      case UInt8(ascii: "n"): try literal("null")
      default: try number()
      }
    }

    mutating func object(depth: Int) throws {
      position += 1
      skipSpace()
      if peek() == UInt8(ascii: "}") {
        position += 1
        return
      }
      while true {
        skipSpace()
        guard peek() == UInt8(ascii: "\"") else {
          throw Malformed(reason: "expected a member name at byte \(position + 1)")
        }
        let name = try string()
        skipSpace()
        try expect(UInt8(ascii: ":"), "':'")
        skipSpace()
        let index = depth == 0 ? names.firstIndex(of: name.bytes) : nil
        let start = position
        let first = peek()
        try value(depth: depth + 1)
        if let index {
          guard found[index] == .missing else {
            throw Malformed(reason: "member '\(String(decoding: name.bytes, as: UTF8.self))' appears twice")
          }
          switch first {
          case UInt8(ascii: "\""):
            let decoded = try Scanner.decode(UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
            found[index] = .string(decoded, token: start..<position)
          case UInt8(ascii: "n"): found[index] = .null
          default: found[index] = .other
          }
        }
        skipSpace()
        if peek() == UInt8(ascii: ",") {
          position += 1
          continue
        }
        try expect(UInt8(ascii: "}"), "',' or '}'")
        return
      }
    }

    mutating func array(depth: Int) throws {
      position += 1
      skipSpace()
      if peek() == UInt8(ascii: "]") {
        position += 1
        return
      }
      while true {
        skipSpace()
        try value(depth: depth + 1)
        skipSpace()
        if peek() == UInt8(ascii: ",") {
          position += 1
          continue
        }
        try expect(UInt8(ascii: "]"), "',' or ']'")
        return
      }
    }

    mutating func literal(_ word: StaticString) throws {
      let count = word.utf8CodeUnitCount
      guard position + count <= bytes.count,
        UnsafeRawBufferPointer(rebasing: bytes[position..<position + count]).elementsEqual(
          UnsafeBufferPointer(start: word.utf8Start, count: count))
      else { throw Malformed(reason: "unexpected value at byte \(position + 1)") }
      position += count
    }

    mutating func number() throws {
      let start = position
      func digits() -> Int {
        let from = position
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { position += 1 }
        return position - from
      }
      if peek() == UInt8(ascii: "-") { position += 1 }
      if peek() == UInt8(ascii: "0") {
        position += 1
      } else if digits() == 0 {
        throw Malformed(reason: "unexpected value at byte \(start + 1)")
      }
      if peek() == UInt8(ascii: ".") {
        position += 1
        guard digits() > 0 else { throw Malformed(reason: "malformed number at byte \(start + 1)") }
      }
      if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
        position += 1
        if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
        guard digits() > 0 else { throw Malformed(reason: "malformed number at byte \(start + 1)") }
      }
    }

    /// Skips a string token, checking its escapes; returns its raw bytes
    /// between the quotes when it has no escape (names are compared so).
    mutating func string() throws -> (bytes: [UInt8], escaped: Bool) {
      let start = position
      position += 1
      var escaped = false
      while true {
        guard let byte = peek() else { throw Malformed(reason: "unterminated string at byte \(start + 1)") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""):
          let token = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
          return escaped ? (Array(try Scanner.decode(token).utf8), true) : (Array(token.dropFirst().dropLast()), false)
        case UInt8(ascii: "\\"):
          escaped = true
          guard let next = peek() else { throw Malformed(reason: "unterminated string at byte \(start + 1)") }
          position += 1
          switch next {
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            break
          case UInt8(ascii: "u"):
            for _ in 0..<4 {
              guard let hex = peek(), Scanner.hexValue(hex) != nil else {
                throw Malformed(reason: "bad \\u escape at byte \(position + 1)")
              }
              position += 1
            }
          default: throw Malformed(reason: "bad escape at byte \(position)")
          }
        case 0..<0x20: throw Malformed(reason: "control character in a string at byte \(position)")
        default: break
        }
      }
    }

    static func hexValue(_ byte: UInt8) -> UInt32? {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
      default: return nil
      }
    }

    /// Decodes a checked string token (quotes included). A lone surrogate
    /// is refused: it has no UTF-8 form.
    static func decode(_ token: UnsafeRawBufferPointer) throws -> String {
      let body = UnsafeRawBufferPointer(rebasing: token[1..<(token.count - 1)])
      guard body.contains(UInt8(ascii: "\\")) else { return String(decoding: body, as: UTF8.self) }
      var scalars = String.UnicodeScalarView()
      var output = [UInt8]()
      var index = 0
      func unit(at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 << 4 | hexValue(body[offset + $1])! }
      }
      while index < body.count {
        let byte = body[index]
        guard byte == UInt8(ascii: "\\") else {
          output.append(byte)
          index += 1
          continue
        }
        let kind = body[index + 1]
        index += 2
        switch kind {
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0c)
        case UInt8(ascii: "n"): output.append(0x0a)
        case UInt8(ascii: "r"): output.append(0x0d)
        case UInt8(ascii: "t"): output.append(0x09)
        case UInt8(ascii: "u"):
          var value = unit(at: index)
          index += 4
          if (0xd800..<0xdc00).contains(value) {
            guard index + 6 <= body.count, body[index] == UInt8(ascii: "\\"), body[index + 1] == UInt8(ascii: "u")
            else { throw Malformed(reason: "lone surrogate in a \\u escape") }
            let low = unit(at: index + 2)
            guard (0xdc00..<0xe000).contains(low) else { throw Malformed(reason: "lone surrogate in a \\u escape") }
            value = 0x10000 + (value - 0xd800) << 10 + (low - 0xdc00)
            index += 6
          }
          guard let scalar = Unicode.Scalar(value) else { throw Malformed(reason: "lone surrogate in a \\u escape") }
          scalars.removeAll(keepingCapacity: true)
          scalars.append(scalar)
          output.append(contentsOf: String(scalars).utf8)
        default: output.append(kind)
        }
      }
      return String(decoding: output, as: UTF8.self)
    }
  }
}

/// UTF-8 validation without allocating (RFC 3629: no overlongs, no
/// surrogates, nothing above U+10FFFF).
enum UTF8Check {
  static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
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
