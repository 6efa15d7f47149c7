import Testing

@testable import TaskCrypto

@Suite("SHA-256")
struct SHA256Tests {
  @Test(arguments: [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
  ])
  func fipsExamplesGiveTheirPublishedDigests(message: String, digest: String) {
    #expect(SHA256.hash(data: Array(message.utf8)).hex == digest)
  }

  @Test func oneMillionAsGivesThePublishedDigest() {
    var hasher = SHA256()
    let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
    for _ in 0..<1000 { hasher.update(data: chunk) }
    #expect(hasher.finalize().hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test func incrementalEqualsOneShotForEverySplit() {
    let message = (0..<200).map { UInt8($0 & 0xff) }
    let expected = SHA256.hash(data: message)
    for split in 0...message.count {
      var hasher = SHA256()
      hasher.update(data: Array(message[..<split]))
      hasher.update(data: Array(message[split...]))
      #expect(hasher.finalize() == expected)
    }
  }

  /// libsodium (short one-shot inputs, the incremental hasher) and OpenSSL
  /// (long one-shot inputs) give the same digest at every size around the
  /// 4 KiB switch, and the one-million-a vector through OpenSSL.
  @Test func bothImplementationsAgreeAroundTheSwitch() {
    var generator = SystemRandomNumberGenerator()
    for size in [0, 1, 55, 56, 63, 64, 65, 1000, 4095, 4096, 4097, 8192, 65_537] {
      let message = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let viaSodium = message.withUnsafeBytes { SHA256.sodiumHash($0) }
      let viaOpenSSL = message.withUnsafeBytes { SHA256.openSSLHash($0) }
      #expect(viaSodium == viaOpenSSL, "\(size) bytes")
      #expect(SHA256.hash(data: message) == viaSodium, "\(size) bytes")
    }
    let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
    #expect(SHA256.hash(data: million).hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test func copiesHashIndependently() {
    var first = SHA256()
    first.update(data: Array("ab".utf8))
    var second = first
    second.update(data: Array("c".utf8))
    #expect(first.finalize() == SHA256.hash(data: Array("ab".utf8)))
    #expect(second.finalize() == SHA256.hash(data: Array("abc".utf8)))
  }

  @Test func digestsOfOtherLengthsAreRefused() {
    #expect(SHA256Digest(bytes: [UInt8](repeating: 0, count: 31)) == nil)
    #expect(SHA256Digest(bytes: [UInt8](repeating: 0, count: 32)) != nil)
  }
}
