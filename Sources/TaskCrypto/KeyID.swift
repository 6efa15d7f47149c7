/// The 32-bit id of a note key, written as 8 lowercase hex digits.
///
/// Ids are drawn at random when a key is made, so two devices that rotate at
/// the same time almost never collide; a keyring refuses a duplicate.
public struct KeyID: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// The id as an integer.
  public let rawValue: UInt32

  /// Wraps an integer id.
  public init(rawValue: UInt32) {
    self.rawValue = rawValue
  }

  /// Parses exactly 8 lowercase hex digits.
  ///
  /// - Throws: `TaskCryptoError.invalidKeyID` for anything else.
  public init(hex: String) throws {
    let utf8 = Array(hex.utf8)
    var bytes = [UInt8](repeating: 0, count: 4)
    let ok = utf8.withUnsafeBytes { source in bytes.withUnsafeMutableBytes { Hex.decode(source, into: $0) } }
    guard ok else { throw TaskCryptoError.invalidKeyID(hex) }
    self.rawValue = bytes.reduce(0) { $0 << 8 | UInt32($1) }
  }

  /// A random id from the CSPRNG.
  public static func random() -> KeyID {
    KeyID(rawValue: SecureRandom.uint32())
  }

  /// 8 lowercase hex digits, big-endian.
  public var hex: String {
    let bytes: [UInt8] = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: rawValue >> $0) }
    return Hex.encode(bytes)
  }

  /// The id as 8 lowercase hex digits.
  public var description: String { hex }

  /// Orders ids by their integer value.
  public static func < (lhs: KeyID, rhs: KeyID) -> Bool { lhs.rawValue < rhs.rawValue }
}
