import TaskerGate
import XCTest

final class GateListenAddressTests: XCTestCase {
  func testAPortAloneBindsLoopback() throws {
    let address = try GateListenAddress("8765")
    XCTAssertEqual(address.address, [127, 0, 0, 1])
    XCTAssertEqual(address.port, 8765)
    XCTAssertTrue(address.isLoopback)
    XCTAssertEqual(address.description, "127.0.0.1:8765")
  }

  func testAnExplicitAddress() throws {
    let address = try GateListenAddress("192.168.1.20:80")
    XCTAssertEqual(address.address, [192, 168, 1, 20])
    XCTAssertFalse(address.isLoopback)
  }

  func testMalformedAddressesAreRefused() {
    for text in [
      "", "0", "65536", "-1", "08765", "localhost:80", "1.2.3:80", "1.2.3.256:80", "1.2.3.4:", ":80",
      "[::1]:80", "1.2.3.4:80:90", " 80", "01.2.3.4:80",
    ] {
      XCTAssertThrowsError(try GateListenAddress(text), text) {
        XCTAssertEqual($0 as? GateError, .invalidListenAddress(text))
      }
    }
  }
}
