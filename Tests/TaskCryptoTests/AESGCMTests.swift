import Testing

@testable import TaskCrypto

@Suite("AES-256-GCM")
struct AESGCMTests {
  func key(_ hex: String) throws -> SymmetricKey {
    try #require(Hex.decode(hex)).withUnsafeBytes { try SymmetricKey(copying: $0) }
  }

  @Test func gcmSpecTestCase16GivesThePublishedCiphertextAndTag() throws {
    let key = try key("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
    let plaintext = try #require(
      Hex.decode(
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
      ))
    let aad = try #require(Hex.decode("feedfacedeadbeeffeedfacedeadbeefabaddad2"))
    let box = try AES.GCM.seal(
      plaintext, using: key, nonce: try #require(Hex.decode("cafebabefacedbaddecaf888")), authenticating: aad)
    #expect(
      Hex.encode(box.ciphertext)
        == "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
    )
    #expect(Hex.encode(box.tag) == "76fc6ece0f4e1768cddf8853bb2d551b")
    #expect(try AES.GCM.open(box, using: key, authenticating: aad) == plaintext)
  }

  @Test func sealUsesAFreshNonceEachTime() throws {
    let key = try SymmetricKey.generate()
    var nonces = Set<[UInt8]>()
    for _ in 0..<1000 {
      nonces.insert(try AES.GCM.seal([UInt8](), using: key).nonce)
    }
    #expect(nonces.count == 1000)
  }

  @Test func wrongKeyFailsAuthentication() throws {
    let box = try AES.GCM.seal(Array("secret".utf8), using: try SymmetricKey.generate())
    #expect(throws: TaskCryptoError.authenticationFailed) {
      try AES.GCM.open(box, using: try SymmetricKey.generate())
    }
  }

  @Test func wrongAssociatedDataFailsAuthentication() throws {
    let key = try SymmetricKey.generate()
    let box = try AES.GCM.seal(Array("secret".utf8), using: key, authenticating: Array("a".utf8))
    #expect(throws: TaskCryptoError.authenticationFailed) {
      try AES.GCM.open(box, using: key, authenticating: Array("b".utf8))
    }
  }

  @Test func openSecretReturnsLockedBytesAndRefusesTampering() throws {
    let key = try SymmetricKey.generate()
    let box = try AES.GCM.seal(Array("provider token".utf8), using: key, authenticating: [UInt8]())
    let secret = try AES.GCM.openSecret(box, using: key, authenticating: [UInt8]())
    #expect(secret.withUnsafeBytes { Array($0) } == Array("provider token".utf8))
    var tag = box.tag
    tag[0] ^= 1
    let tampered = AES.GCM.SealedBox(nonce: box.nonce, ciphertext: box.ciphertext, tag: tag)
    #expect(throws: TaskCryptoError.authenticationFailed) {
      try AES.GCM.openSecret(tampered, using: key, authenticating: [UInt8]())
    }
  }

  @Test func combinedLayoutIsNonceCiphertextTag() throws {
    let key = try SymmetricKey.generate()
    let box = try AES.GCM.seal(Array("abc".utf8), using: key)
    #expect(box.combined.count == 12 + 3 + 16)
    let parsed = try AES.GCM.SealedBox(combined: box.combined)
    #expect(parsed == box)
    #expect(throws: TaskCryptoError.truncated(byteCount: 27)) {
      try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: 27))
    }
  }

  @Test func keysOfOtherSizesAreRefused() throws {
    for size in [0, 16, 24, 31, 33, 64] {
      let bytes = [UInt8](repeating: 7, count: size)
      #expect(throws: TaskCryptoError.invalidKeySize(size)) {
        try bytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
      }
    }
  }
}
