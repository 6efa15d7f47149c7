import TaskerTestSupport
import Testing

@testable import TaskerCore

/// Text is bound from its own UTF-8 (Statement.bind): every byte kept, an
/// empty string stays '' and never becomes NULL.
@Suite struct SQLiteBindingTests {
  @Test(arguments: ["", "plain", "é 🙂 \u{7f}", "nul \u{0} inside", String(repeating: "x", count: 100_000)])
  func textIsStoredExactly(_ text: String) throws {
    let directory = try TemporaryDirectory()
    let connection = try Connection(path: directory.path("t.db"), create: true)
    try connection.execute("CREATE TABLE t (v TEXT NOT NULL)")
    try connection.prepare("INSERT INTO t (v) VALUES (?)").run([.text(text)])
    #expect(
      try connection.prepare("SELECT typeof(v), length(CAST(v AS BLOB)) FROM t").first {
        "\($0.text(0)) \($0.integer(1))"
      }
        == "text \(text.utf8.count)")
    #expect(try connection.prepare("SELECT v FROM t").first { $0.text(0) } == text)
  }
}
