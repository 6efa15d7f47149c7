/// A dotted-quad IPv4 literal, strictly: four decimal parts 0–255 without
/// leading zeros (no `127.1`, no octal, no hexadecimal).
enum IPv4Literal {
  /// The four bytes of `text`, or nil when it is not a strict dotted quad.
  static func parse(_ text: Substring) -> [UInt8]? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return nil }
    var bytes: [UInt8] = []
    for part in parts {
      guard !part.isEmpty, part.count <= 3, part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
        part == "0" || !part.hasPrefix("0"), let value = UInt8(part)
      else { return nil }
      bytes.append(value)
    }
    return bytes
  }

  /// The four bytes of `text`, or nil when it is not a strict dotted quad.
  static func parse(_ text: String) -> [UInt8]? { parse(Substring(text)) }
}

/// An RFC 4291 IPv6 literal (text form, without brackets or zone): eight
/// groups of one to four hexadecimal digits, at most one `::`, and an
/// optional dotted-quad IPv4 address in place of the last two groups.
enum IPv6Literal {
  /// The sixteen bytes of `text`, or nil when it is not an IPv6 address.
  static func parse(_ text: Substring) -> [UInt8]? {
    guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
    guard let pieces = split(text), let head = groups(pieces.head, allowIPv4: pieces.tail == nil) else {
      return nil
    }
    var tail: [UInt16] = []
    if let tailText = pieces.tail {
      guard let tailGroups = groups(tailText, allowIPv4: true) else { return nil }
      tail = tailGroups
      guard head.count + tail.count <= 7 else { return nil }
    } else {
      guard head.count == 8 else { return nil }
    }
    let all = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
    return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
  }

  /// The sixteen bytes of `text`, or nil when it is not an IPv6 address.
  static func parse(_ text: String) -> [UInt8]? { parse(Substring(text)) }

  /// `text` cut at its one `::` (tail nil when there is none); nil when
  /// `::` appears twice or a single colon begins or ends the text.
  private static func split(_ text: Substring) -> (head: Substring, tail: Substring?)? {
    let bytes = Array(text.utf8)
    var doubleColon: Int?
    var index = 0
    while index + 1 < bytes.count {
      if bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: ":") {
        guard doubleColon == nil else { return nil }
        doubleColon = index
        index += 2
        continue
      }
      index += 1
    }
    guard let doubleColon else {
      if text.hasPrefix(":") || text.hasSuffix(":") { return nil }
      return (text, nil)
    }
    let start = text.utf8.index(text.startIndex, offsetBy: doubleColon)
    let end = text.utf8.index(start, offsetBy: 2)
    let head = text[..<start]
    let tail = text[end...]
    if head.hasSuffix(":") || tail.hasPrefix(":") { return nil }
    return (head, tail)
  }

  /// The groups of `text` (colon-separated, maybe ending in an IPv4
  /// address); empty text is no groups.
  private static func groups(_ text: Substring, allowIPv4: Bool) -> [UInt16]? {
    if text.isEmpty { return [] }
    var result: [UInt16] = []
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    for (offset, part) in parts.enumerated() {
      if offset == parts.count - 1 && part.contains(".") {
        guard allowIPv4, let v4 = IPv4Literal.parse(part) else { return nil }
        result.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
        result.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
        continue
      }
      guard (1...4).contains(part.utf8.count), part.utf8.allSatisfy(\.isASCIIHexDigit),
        let value = UInt16(part, radix: 16)
      else { return nil }
      result.append(value)
    }
    return result
  }
}

extension UInt8 {
  /// Whether the byte is an ASCII letter or digit.
  var isASCIIAlphanumeric: Bool {
    (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
  }

  /// Whether the byte is an ASCII hexadecimal digit (either case).
  var isASCIIHexDigit: Bool {
    (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
  }
}
