import TaskerCore

/// The credential an HTTP request presents, read from its `Authorization`
/// header as RFC 6750 says (`Bearer <token>`, scheme case-insensitive).
public enum BearerCredential: Equatable, Sendable {
  /// No `Authorization` header.
  case missing
  /// A header that is not one `Bearer <token>` (another scheme, several
  /// headers, no token, or extra spaces).
  case malformed
  /// The token, exactly as sent.
  case token(String)

  /// Reads the credential from a request's headers.
  ///
  /// - Parameter headers: header values by lower-case name.
  /// - Returns: what was presented.
  public static func read(_ headers: [String: [String]]) -> BearerCredential {
    guard let values = headers["authorization"], !values.isEmpty else { return .missing }
    guard values.count == 1 else { return .malformed }
    // Read as bytes: the scheme is ASCII, and so is every space or tab.
    let value = Array(values[0].utf8)
    let scheme = Array("bearer ".utf8)
    guard value.count > scheme.count,
      zip(value, scheme).allSatisfy({ ASCIIText.lowercased($0) == $1 })
    else { return .malformed }
    let token = value[scheme.count...]
    guard !token.contains(UInt8(ascii: " ")), !token.contains(UInt8(ascii: "\t")) else { return .malformed }
    return .token(String(decoding: token, as: UTF8.self))
  }
}
