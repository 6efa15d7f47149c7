import TaskCrypto

/// The public id of an assistant key: `tkid_` and 16 lowercase hex digits.
///
/// Derived from the registry's digest, `SHA-256("tkid-v1:" || digest)`,
/// first 8 bytes, so it names a key without revealing anything that helps
/// to find the key or to match the stored digest. Safe to print and log.
public struct AssistantKeyID: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// The prefix of every id: `tkid_`.
  public static let prefix = "tkid_"
  static let domain = Array("tkid-v1:".utf8)

  /// The id as text, `tkid_` and 16 lowercase hex digits.
  public let text: String

  /// Derives the id of the key whose digest is `digest`.
  public init(digest: SHA256Digest) {
    var hasher = SHA256()
    hasher.update(data: Self.domain)
    hasher.update(data: digest)
    self.text = Self.prefix + String(hasher.finalize().hex.prefix(16))
  }

  /// Parses an id as printed by `list` and `mint`.
  ///
  /// - Returns: nil unless `text` is exactly `tkid_` and 16 lowercase hex
  ///   digits.
  public init?(_ text: String) {
    let utf8 = Array(text.utf8)
    guard utf8.count == Self.prefix.utf8.count + 16, text.hasPrefix(Self.prefix) else { return nil }
    let hexDigits = utf8.dropFirst(Self.prefix.utf8.count)
    guard hexDigits.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
    self.text = text
  }

  /// The id text.
  public var description: String { text }

  /// Orders ids by their text.
  public static func < (lhs: AssistantKeyID, rhs: AssistantKeyID) -> Bool {
    lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8)
  }
}
