/// ASCII case for protocol words and spelled-out values (header names, an
/// HTTP scheme, due-date words): capitals A–Z made small, every other byte
/// kept as it is, with none of Unicode's case rules.
public enum ASCIIText {
  /// `byte` made small if it is an ASCII capital, else `byte`.
  public static func lowercased(_ byte: UInt8) -> UInt8 {
    (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
  }

  /// `text` with ASCII capitals made small and every other byte kept.
  public static func lowercased(_ text: String) -> String {
    String(decoding: text.utf8.map(lowercased), as: UTF8.self)
  }
}
