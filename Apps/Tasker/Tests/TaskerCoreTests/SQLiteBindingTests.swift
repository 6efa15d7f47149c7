import TaskerTestSupport
import Testing

@testable import TaskerCore

/// Text is bound from its own UTF-8 (Statement.bind): every byte kept, an
/// empty string stays '' and never becomes NULL.
@Suite struct SQLiteBindingTests {
  @Test(arguments: ["", "plain", "é 🙂 \u{7f}", "nul \u{0} inside", String(repeating: "x", count: 4_096)])
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

  /// Text given as bytes (`SQLValue.utf8`) is stored as text, byte for
  /// byte, and `Statement.utf8` reads the same bytes back.
  @Test(arguments: ["", "plain", "é 🙂 \u{7f}", "nul \u{0} inside", String(repeating: "x", count: 4_096)])
  func textGivenAsBytesIsStoredExactly(_ text: String) throws {
    let directory = try TemporaryDirectory()
    let connection = try Connection(path: directory.path("t.db"), create: true)
    try connection.execute("CREATE TABLE t (v TEXT NOT NULL)")
    try connection.prepare("INSERT INTO t (v) VALUES (?)").run([.utf8(Array(text.utf8))])
    let stored = try connection.prepare("SELECT typeof(v), v FROM t").first { "\($0.text(0)) \($0.text(1))" }
    #expect(stored == "text \(text)")
    #expect(try connection.prepare("SELECT v FROM t").first { $0.utf8(0) } == Array(text.utf8))
  }

  /// `withoutTriggers` turns this connection's triggers off for its body
  /// only, however the body ends, and leaves another connection's on.
  @Test func triggersAreOffInsideWithoutTriggersOnlyAndComeBackAfterAThrow() throws {
    struct Stop: Error {}
    let directory = try TemporaryDirectory()
    let connection = try Connection(path: directory.path("t.db"), create: true)
    try connection.execute(
      """
      CREATE TABLE t (v INTEGER); CREATE TABLE marks (v INTEGER);
      CREATE TRIGGER marked AFTER INSERT ON t BEGIN INSERT INTO marks (v) VALUES (new.v); END;
      """)
    let other = try Connection(path: directory.path("t.db"), create: false)
    func marks() throws -> [Int64] { try connection.prepare("SELECT v FROM marks ORDER BY v").rows { $0.integer(0) } }
    let insert = "INSERT INTO t (v) VALUES (?)"
    try connection.prepare(insert).run([.integer(1)])
    try connection.withoutTriggers {
      try connection.prepare(insert).run([.integer(2)])
      try other.prepare(insert).run([.integer(3)])
    }
    #expect(try marks() == [1, 3])
    #expect(throws: Stop.self) {
      try connection.withoutTriggers {
        try connection.prepare(insert).run([.integer(4)])
        throw Stop()
      }
    }
    try connection.prepare(insert).run([.integer(5)])
    #expect(try marks() == [1, 3, 5])
    #expect(try connection.prepare("SELECT count(*) FROM t").first { $0.integer(0) } == 5)
  }
}
