import Testing

@testable import TaskCrypto

@Suite("Canonical base64")
struct Base64Tests {
  @Test(arguments: [
    ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
    ("foobar", "Zm9vYmFy"),
  ])
  func rfc4648ExamplesRoundTrip(plain: String, encoded: String) {
    #expect(Base64.encode(Array(plain.utf8)) == encoded)
    #expect(Base64.decode(encoded) == Array(plain.utf8))
  }

  @Test(arguments: [
    "QR==",  // non-zero trailing bits: QQ== is the one spelling of "A"
    "Zm9=",  // non-zero trailing bits
    "Zg",  // missing padding
    "Zg=",  // short padding
    "Zg===",  // extra padding
    "Zm9v\n",  // trailing newline
    " Zm9v",  // leading space
    "Zm 9v",  // inner space
    "Zm-v",  // URL-safe alphabet
    "Zm_v",  // URL-safe alphabet
    "Z===",  // padding where data must be
    "=Zm9",  // padding first
    "Zg==Zg==",  // padding in the middle
    "Zm9vé===",  // non-ASCII
  ])
  func nonCanonicalSpellingsAreRefused(text: String) {
    #expect(Base64.decode(text) == nil)
  }

  @Test func randomBytesRoundTripAtEveryLength() {
    for length in 0..<100 {
      let bytes = SecureRandom.bytes(count: length)
      #expect(Base64.decode(Base64.encode(bytes)) == bytes)
    }
  }
}
