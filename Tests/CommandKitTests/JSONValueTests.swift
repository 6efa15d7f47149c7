import CommandKit
import XCTest

/// The one strict JSON codec: kinds kept apart, escapes, refusals, the depth bound.
final class JSONValueTests: XCTestCase {
  func testKindsAreKeptApart() {
    let parsed = JSONValue.parse(
      Array(#"[true, false, 1, 0, -5, 1.5, "s", null, {"a": [2]}, 1e3, 2.0, 9223372036854775808, -2.5e-3]"#.utf8))
    XCTAssertEqual(
      parsed,
      [
        .bool(true), .bool(false), .integer(1), .integer(0), .integer(-5), .number(1.5), "s", .null,
        ["a": [.integer(2)]], .number(1000), .number(2), .number(9_223_372_036_854_775_808), .number(-0.0025),
      ])
    XCTAssertEqual(
      parsed?.text, #"[true,false,1,0,-5,1.5,"s",null,{"a":[2]},1000,2,9.223372036854776e+18,-0.0025]"#)
    XCTAssertNil(JSONValue.parse(Array(#" {"k": 1, "k": 2} "#.utf8)), "a repeated key is refused")
    XCTAssertNil(JSONValue.parse(Array(#"{"a": {"k": 1, "\u006b": 2}}"#.utf8)), "also when spelled with an escape")
    XCTAssertEqual(JSONValue.parse(Array(#"{"k": 1, "j": {"k": 2}}"#.utf8)), ["k": 1, "j": ["k": 2]])
    XCTAssertEqual(
      JSONValue.parse(Array(#""\ud83d\ude42 \u00e9\/\b\f\n\r\t""#.utf8)), .string("🙂 é/\u{8}\u{c}\n\r\t"))
  }

  func testStringsRoundTripWithEveryEscape() {
    let text = "quote \" backslash \\ newline \n tab \t bell \u{7} del \u{7f} é 🙂 /"
    let value: JSONValue = ["k\"ey": .string(text)]
    XCTAssertEqual(JSONValue.parse(value.encoded), value)
    XCTAssertEqual(JSONValue.string("\u{1}").text, #""\u0001""#)
  }

  func testEscapesAreWrittenByteForByteBetweenRunsOfPlainText() {
    // Escapes first, last, side by side and between runs; every control byte; non-ASCII kept as UTF-8.
    XCTAssertEqual(JSONValue.string("\"a\\\\b\n\"").text, #""\"a\\\\b\n\"""#)
    XCTAssertEqual(JSONValue.string("").text, #""""#)
    XCTAssertEqual(JSONValue.string("plain é 🙂 / text").text, "\"plain é 🙂 / text\"")
    let controls = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
    XCTAssertEqual(
      JSONValue.string(controls).text,
      #""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f"#
        + #"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f""#)
    let object: JSONValue = ["b": 1, "a": ["z": "x\ty", "é": .null, "A": true], "": []]
    XCTAssertEqual(object.text, #"{"":[],"a":{"A":true,"z":"x\ty","é":null},"b":1}"#, "keys sorted, values beside them")
  }

  func testPlainRunsBeforeAndAfterEscapesParseWhole() {
    // A string with no escape is taken as it is; one with an escape after a plain run keeps the run.
    let long = String(repeating: "abcdefgh", count: 4096)
    XCTAssertEqual(JSONValue.parse(Array("\"\(long)\"".utf8)), .string(long))
    XCTAssertEqual(
      JSONValue.parse(Array(#"["plain é", "run\nafter", "\"", "x\u00e9y", ""]"#.utf8)),
      ["plain é", "run\nafter", "\"", "xéy", ""])
    // A control character after a plain run is refused at its own byte (1-based).
    XCTAssertThrowsError(try JSONDocument(parsing: Array("\"abc\u{1}\"".utf8))) { error in
      XCTAssertEqual((error as? JSONError)?.reason, "control character in a string at byte 5")
    }
    XCTAssertThrowsError(try JSONDocument(parsing: Array("\"abc".utf8))) { error in
      XCTAssertEqual((error as? JSONError)?.reason, "unterminated string at byte 1")
    }
  }

  func testInvalidJSONIsNil() {
    let invalid = [
      "", "{", "{'a':1}", "nul", "\"\u{7}\"", "1 2", "[1,]", #"{"a":1,}"#, "01", "-01", "NaN", "1e999", "-", "1.",
      ".5", "1e", "+1", "tru", "[1 2]", #"{"a" 1}"#, "{1:2}", #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#,
      #""\x""#, #""\u12""#, #""a"#, "// c\n1", "[", "]",
    ]
    for text in invalid {
      XCTAssertNil(JSONValue.parse(Array(text.utf8)), text)
    }
    XCTAssertNil(JSONValue.parse([0x22, 0xff, 0x22]), "invalid UTF-8")
    // Nesting is bounded: a deep document is refused, never a stack overflow.
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    XCTAssertNil(JSONValue.parse(Array(deep.utf8)))
    let depth = JSONDocument.maximumDepth
    let allowed = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    XCTAssertNotNil(JSONValue.parse(Array(allowed.utf8)))
    let over = String(repeating: "{\"a\":", count: depth + 1) + "1" + String(repeating: "}", count: depth + 1)
    XCTAssertNil(JSONValue.parse(Array(over.utf8)), "one level past the bound is refused")
  }
}
