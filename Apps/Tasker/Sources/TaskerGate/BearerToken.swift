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
    let value = values[0]
    guard value.count > 7, value.prefix(7).lowercased() == "bearer " else { return .malformed }
    let token = value.dropFirst(7)
    guard !token.isEmpty, !token.contains(" " as Character), !token.contains("\t" as Character) else {
      return .malformed
    }
    return .token(String(token))
  }
}
