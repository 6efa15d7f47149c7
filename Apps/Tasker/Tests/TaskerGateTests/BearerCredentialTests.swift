import TaskerGate
import XCTest

final class BearerCredentialTests: XCTestCase {
  func testTheSchemeIsCaseInsensitiveAndTheTokenExact() {
    XCTAssertEqual(BearerCredential.read(["authorization": ["Bearer tk_abc"]]), .token("tk_abc"))
    XCTAssertEqual(BearerCredential.read(["authorization": ["bearer tk_abc"]]), .token("tk_abc"))
  }

  func testMissingAndMalformedHeaders() {
    XCTAssertEqual(BearerCredential.read([:]), .missing)
    XCTAssertEqual(BearerCredential.read(["authorization": []]), .missing)
    for value in [
      "Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Bearer  tk_abc", "Bearer tk_abc extra", "tk_abc", "Token tk_abc",
    ] {
      XCTAssertEqual(BearerCredential.read(["authorization": [value]]), .malformed, value)
    }
    XCTAssertEqual(BearerCredential.read(["authorization": ["Bearer a", "Bearer b"]]), .malformed)
  }

  /// The header is read as bytes: the scheme in any ASCII case, then one
  /// space, then the token exactly as sent, whatever bytes it holds.
  func testTheSchemeInAnyCaseAndTheTokenByteForByte() {
    for scheme in ["Bearer", "bearer", "BEARER", "BeArEr", "bEARER"] {
      XCTAssertEqual(BearerCredential.read(["authorization": [scheme + " x"]]), .token("x"), scheme)
    }
    for token in ["tk_é", "tk_☕️", "tk_e\u{301}", "\u{301}", "tk_\u{2028}", "tk_\u{a0}x", "\"quoted\"", "a=b,c;d"] {
      guard case .token(let read) = BearerCredential.read(["authorization": ["Bearer " + token]]) else {
        XCTFail("not a token: \(token.debugDescription)")
        continue
      }
      XCTAssertEqual(Array(read.utf8), Array(token.utf8), token.debugDescription)
    }
    let long = String(repeating: "k", count: 10_000)
    XCTAssertEqual(BearerCredential.read(["authorization": ["Bearer " + long]]), .token(long))
  }

  func testEverythingButOneBearerTokenIsMalformed() {
    XCTAssertEqual(BearerCredential.read(["other": ["Bearer x"]]), .missing, "only authorization counts")
    for values in [["Bearer x", "Bearer x"], ["Bearer x", ""], ["", ""]] {
      XCTAssertEqual(BearerCredential.read(["authorization": values]), .malformed, "\(values)")
    }
    for value in [
      "", " ", "Bearer", "Bearer ", "Bearer  x", "Bearer x ", " Bearer x", "Bearer x y", "Bearer x\ty", "Bearer \tx",
      "Bearer\tx", "Bearer\u{a0}x", "Basic x", "Bearerx", "Bearer:x", "Bear x", "Bearers x", "Beärer x",
      "Bearer\u{301} x",
      "ＢＥＡＲＥＲ x", "Bearer\u{0} x", "Bearer\u{0}x", "B\u{130}arer x", "Bearer\nx",
    ] {
      XCTAssertEqual(BearerCredential.read(["authorization": [value]]), .malformed, value.debugDescription)
    }
  }
}
