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
}
