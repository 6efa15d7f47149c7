import CommandKit
import Testing

/// The one function every printer uses (issue 22, break 8).
@Suite("TerminalText: control characters made visible")
struct TerminalTextTests {
  @Test(arguments: [
    ("\u{1B}[31mred", "\\u{1B}[31mred"), ("\u{1B}]0;title\u{07}", "\\u{1B}]0;title\\u{7}"), ("a\rb", "a\\rb"),
    ("bell\u{07}", "bell\\u{7}"), ("x\u{2028}y\u{2029}z", "x\\u{2028}y\\u{2029}z"),
    ("\u{202A}\u{202B}\u{202C}\u{202D}\u{202E}", "\\u{202A}\\u{202B}\\u{202C}\\u{202D}\\u{202E}"),
    ("\u{2066}\u{2067}\u{2068}\u{2069}", "\\u{2066}\\u{2067}\\u{2068}\\u{2069}"),
    ("\u{061C}\u{200E}\u{200F}", "\\u{61C}\\u{200E}\\u{200F}"), ("\u{7F}\u{85}\u{9B}", "\\u{7F}\\u{85}\\u{9B}"),
    ("\u{0}", "\\u{0}"), ("tab\tnew\nline", "tab\\tnew\\nline"),
  ])
  func controlsAreMadeVisible(text: String, shown: String) {
    #expect(TerminalText.visible(text) == shown)
  }

  @Test func linesAreKeptForBodies() {
    #expect(TerminalText.visible("one\n\ttwo\u{1B}[K\r", keepingLines: true) == "one\n\ttwo\\u{1B}[K\\r")
  }

  @Test(arguments: ["Buy milk", "café ©2026 — ½ ✓ 日本語 🇩🇪 👩‍💻", "\u{00A0}\u{2013}\u{2030}\u{20AC}", ""])
  func printableTextIsUnchanged(text: String) {
    #expect(TerminalText.visible(text) == text)
    #expect(TerminalText.visible(text, keepingLines: true) == text)
  }

  @Test func visibleTextHoldsNoControlAndIsStable() {
    var all = ""
    for value in UInt32(0)...0x3000 { if let scalar = Unicode.Scalar(value) { all.unicodeScalars.append(scalar) } }
    let shown = TerminalText.visible(all)
    #expect(shown.unicodeScalars.allSatisfy { TerminalText.visible(String($0)) == String($0) })
    #expect(TerminalText.visible(shown) == shown)
  }
}
