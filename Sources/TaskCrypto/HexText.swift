extension Array where Element == UInt8 {
  /// Decodes strict lowercase hexadecimal (`0-9a-f`, an even number of
  /// digits), the spelling of every byte field in `Vectors/`; nil for
  /// anything else.
  public init?(lowercaseHex text: String) {
    guard let bytes = Hex.decode(text) else { return nil }
    self = bytes
  }

  /// The bytes as lowercase hexadecimal.
  public var lowercaseHex: String { Hex.encode(self) }
}
