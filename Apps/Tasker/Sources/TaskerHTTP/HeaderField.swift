/// One header field, checked: a name that is an HTTP token (RFC 9110 §5.6.2)
/// and a value without control characters other than horizontal tab (no
/// CR, LF or NUL, so no field can smuggle another line), spaces and tabs
/// around it removed.
struct HeaderField {
  /// Header names this client writes itself; a request may not set them.
  static let reservedNames: Set<String> = [
    "authorization", "host", "content-length", "transfer-encoding", "expect", "connection",
  ]

  let name: String
  let value: String

  /// The field of a response line `Name: value` (its CR LF already
  /// removed), or nil when it is refused. A value that is not UTF-8 is
  /// decoded with U+FFFD in place of the bad bytes.
  init?(line: [UInt8]) {
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
    let name = line[..<colon]
    guard Self.isToken(name) else { return nil }
    let value = line[(colon + 1)...].trimmingSpaces()
    guard Self.isFieldValue(value) else { return nil }
    self.name = String(decoding: name, as: UTF8.self)
    self.value = String(decoding: value, as: UTF8.self)
  }

  /// Checks a request field; `value` is sent with its surrounding spaces
  /// removed.
  ///
  /// - Throws: `HTTPClientError.headerRefused` for a name that is not a
  ///   token, one of `reservedNames`, or a value with a control character.
  static func checkedRequestLine(name: String, value: String) throws(HTTPClientError) -> String {
    guard isToken(Array(name.utf8)[...]) else { throw .headerRefused(name: shown(name.utf8)) }
    guard !reservedNames.contains(name.lowercased()) else { throw .headerRefused(name: name) }
    let trimmed = Array(value.utf8)[...].trimmingSpaces()
    guard isFieldValue(trimmed) else { throw .headerRefused(name: name) }
    // "Name;" is libcurl's way to send a field with an empty value ("Name:"
    // alone would remove a field libcurl adds).
    return trimmed.isEmpty ? name + ";" : name + ": " + String(decoding: trimmed, as: UTF8.self)
  }

  /// The name to report for a refused response line: the text before the
  /// colon when it is a token, else a placeholder (the server's bytes are
  /// not repeated).
  static func name(ofRefused line: [UInt8]) -> String {
    if line.first == 0x20 || line.first == 0x09 { return "(a folded continuation line)" }
    let name = line[..<(line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex)]
    return shown(name)
  }

  private static func shown<Bytes: Collection<UInt8>>(_ name: Bytes) -> String {
    isToken(Array(name)[...]) ? String(decoding: name, as: UTF8.self) : "(a name that is not an HTTP token)"
  }

  static func isToken(_ bytes: ArraySlice<UInt8>) -> Bool {
    !bytes.isEmpty && bytes.allSatisfy { $0.isASCIIAlphanumeric || "!#$%&'*+-.^_`|~".utf8.contains($0) }
  }

  private static func isFieldValue(_ bytes: ArraySlice<UInt8>) -> Bool {
    bytes.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
  }
}

extension ArraySlice where Element == UInt8 {
  fileprivate func trimmingSpaces() -> ArraySlice<UInt8> {
    var slice = self
    while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
    while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
    return slice
  }
}
