import Foundation
import Testing

@testable import TaskCrypto

@Suite struct HMACTests {
  private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  @Test func rfc4231TestCase1MatchesTheRFC() {
    var mac = HMACSHA256(keyBytes: [UInt8](repeating: 0x0b, count: 20))
    mac.update(data: Array("Hi There".utf8))
    #expect(hex(mac.finalize()) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
  }

  @Test func rfc4231TestCase2MatchesTheRFC() {
    var mac = HMACSHA256(keyBytes: Array("Jefe".utf8))
    mac.update(data: Array("what do ya want ".utf8))
    mac.update(data: Array("for nothing?".utf8))
    #expect(hex(mac.finalize()) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
  }

  @Test func thirtyTwoByteKeyMatchesPythonHmac() throws {
    let key = try [UInt8](0..<32).withUnsafeBytes { try SymmetricKey(copying: $0) }
    let code = HMACSHA256.authenticationCode(for: Array("taskkey".utf8), using: key)
    #expect(hex(code) == "85eec34fe48b01cb92346b523d46c6361933a6eca1e7e31ff022b708f73edf88")
  }

  @Test func verificationRejectsAnyChangedByteOrLengthAndAnotherKey() throws {
    let key = try SymmetricKey.generate()
    let data = Array("registry".utf8)
    let code = HMACSHA256.authenticationCode(for: data, using: key)
    #expect(HMACSHA256.isValidAuthenticationCode(code, authenticating: data, using: key))
    for index in code.indices {
      var changed = code
      changed[index] ^= 0x01
      #expect(!HMACSHA256.isValidAuthenticationCode(changed, authenticating: data, using: key))
    }
    #expect(!HMACSHA256.isValidAuthenticationCode(Array(code.dropLast()), authenticating: data, using: key))
    #expect(!HMACSHA256.isValidAuthenticationCode(code, authenticating: data + [0], using: key))
    #expect(!HMACSHA256.isValidAuthenticationCode(code, authenticating: data, using: try SymmetricKey.generate()))
  }
}
