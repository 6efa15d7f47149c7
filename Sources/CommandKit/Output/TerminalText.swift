/// Text a user or an assistant wrote, made safe to print: every character
/// that a terminal acts on instead of showing is written out as a visible
/// escape, so no stored title, note, context, name or reason can move the
/// cursor, rewrite a line, set a window title, ring the bell, or reorder
/// what is shown (an approval row that reads "add task" while it deletes).
///
/// Made visible: the C0 controls (U+0000-U+001F, ESC among them, so no CSI
/// or OSC sequence survives), DEL and the C1 controls (U+007F-U+009F), the
/// line and paragraph separators (U+2028, U+2029), and the bidirectional
/// controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069).
/// Tab, newline and carriage return are spelled `\t`, `\n`, `\r`; every
/// other one `\u{HEX}` (upper-case hex, as Swift writes it). JSON output
/// does not go through here: its writer escapes what JSON requires and the
/// value stays exact.
public enum TerminalText {
  /// `text` with every control character made visible.
  ///
  /// - Parameters:
  ///   - text: what a user or an assistant wrote (or a database holds).
  ///   - keepingLines: keep newlines and tabs as they are, for a note or a
  ///     page body printed on lines of its own; false (the default) for a
  ///     field printed inside a line or a tab-separated row, where a
  ///     newline or a tab would forge another row or column.
  /// - Returns: `text` itself when it holds nothing to escape.
  public static func visible(_ text: String, keepingLines: Bool = false) -> String {
    guard mayNeedEscaping(text) else { return text }
    var result = ""
    result.reserveCapacity(text.utf8.count + 8)
    for scalar in text.unicodeScalars {
      if keepingLines && (scalar == "\n" || scalar == "\t") {
        result.unicodeScalars.append(scalar)
      } else if let escape = escape(scalar) {
        result += escape
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// The visible spelling of `scalar`, or nil when it prints as itself.
  static func escape(_ scalar: Unicode.Scalar) -> String? {
    switch scalar.value {
    case 0x09: return "\\t"
    case 0x0A: return "\\n"
    case 0x0D: return "\\r"
    case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069:
      return "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
    default: return nil
    }
  }

  /// False only when no byte of `text` can start a character to escape:
  /// C0 and DEL are single bytes; C1 starts with 0xC2, U+061C with 0xD8,
  /// the rest with 0xE2. One pass over the bytes, so the common case
  /// (a plain title) costs no scalar decoding and no copy.
  static func mayNeedEscaping(_ text: String) -> Bool {
    text.utf8.contains { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xD8 || $0 == 0xE2 }
  }
}
