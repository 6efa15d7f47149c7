import Testing

@testable import TaskCrypto

@Suite("Sealed values")
struct SealedValueTests {
  let keyring: Keyring

  init() throws {
    keyring = try Keyring.generate()
  }

  @Test func sealedTextHasTheV1ShapeAndOpens() throws {
    let sealed = try SealedValue.seal("buy milk", using: keyring, context: "note/1/body")
    #expect(sealed.range(of: #"^tc1\.[0-9a-f]{8}:[A-Za-z0-9+/]+={0,2}$"#, options: .regularExpression) != nil)
    #expect(sealed.hasPrefix("tc1.\(keyring.primaryID.hex):"))
    #expect(SealedValue.isSealed(sealed))
    #expect(try SealedValue.open(sealed, using: keyring, context: "note/1/body") == "buy milk")
  }

  @Test func parseThenTextReproducesTheSameBytes() throws {
    let sealed = try SealedValue.seal("x", using: keyring)
    #expect(try SealedValue.parse(sealed)?.text == sealed)
  }

  @Test(arguments: ["buy milk", "tc2. call Bob", "TC1.00000000:AAAA", "", "tc1.0000000:AAAA", "tc0.00000000:AAAA"])
  func plainValuesPassThroughUnchanged(value: String) throws {
    #expect(!SealedValue.isSealed(value))
    #expect(try SealedValue.open(value, using: keyring) == value)
  }

  @Test func aSealedValueSealedAgainOpensOnceToTheInnerValue() throws {
    let inner = try SealedValue.seal("secret", using: keyring, context: "c")
    let outer = try SealedValue.seal(inner, using: keyring, context: "c")
    #expect(try SealedValue.open(outer, using: keyring, context: "c") == inner)
    #expect(try SealedValue.open(inner, using: keyring, context: "c") == "secret")
  }

  @Test func aValueCopiedToAnotherContextDoesNotOpen() throws {
    let sealed = try SealedValue.seal("secret", using: keyring, context: "note/1/body")
    #expect(throws: TaskCryptoError.authenticationFailed) {
      try SealedValue.open(sealed, using: keyring, context: "note/2/body")
    }
  }

  @Test func unknownVersionsAreErrorsNotPlainText() throws {
    let sealed = try SealedValue.seal("secret", using: keyring)
    let v2 = "tc2" + sealed.dropFirst(3)
    #expect(throws: TaskCryptoError.unsupportedVersion("2")) { try SealedValue.open(v2, using: keyring) }
  }

  @Test func oversizedPlaintextIsRefused() throws {
    let big = [UInt8](repeating: 0x61, count: SealedValue.maximumPlaintextByteCount + 1)
    #expect(
      throws: TaskCryptoError.tooLarge(byteCount: big.count, limit: SealedValue.maximumPlaintextByteCount)
    ) { try SealedValue.seal(bytes: big, using: keyring.primary) }
  }

  @Test func oversizedSealedTextIsRefusedBeforeDecoding() throws {
    let text = "tc1.\(keyring.primaryID.hex):" + String(repeating: "A", count: SealedValue.maximumSealedByteCount)
    #expect(throws: TaskCryptoError.tooLarge(byteCount: text.utf8.count, limit: SealedValue.maximumSealedByteCount)) {
      try SealedValue.open(text, using: keyring)
    }
  }

  @Test func largestPlaintextRoundTrips() throws {
    let big = [UInt8](repeating: 0x61, count: SealedValue.maximumPlaintextByteCount)
    let sealed = try SealedValue.seal(bytes: big, using: keyring.primary)
    #expect(sealed.utf8.count <= SealedValue.maximumSealedByteCount)
    #expect(try SealedValue.openBytes(sealed, using: keyring) == big)
  }

  @Test func randomSizesKeysAndContextsRoundTrip() throws {
    // Sizes from 0 B to 1 MiB, including block and base64 boundaries.
    var sizes = [0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 255, 256, 4095, 4096, 65_537, 1 << 20]
    for _ in 0..<24 { sizes.append(Int(SecureRandom.uint32() % (1 << 20))) }
    for size in sizes {
      let keyring = try Keyring.generate()
      let plaintext = SecureRandom.bytes(count: size)
      let context = "note/\(SecureRandom.uint32())/body"
      let sealed = try SealedValue.seal(bytes: plaintext, using: keyring.primary, context: context)
      #expect(try SealedValue.openBytes(sealed, using: keyring, context: context) == plaintext, "size \(size)")
    }
  }

  @Test func everySingleBitFlipOfASealedValueFailsToOpen() throws {
    let context = "note/7/body"
    let sealed = try SealedValue.seal("a short note to tamper with", using: keyring, context: context)
    let bytes = Array(sealed.utf8)
    var flips = 0
    for index in bytes.indices {
      for bit in 0..<8 {
        var mutated = bytes
        mutated[index] ^= 1 << bit
        let text = String(decoding: mutated, as: UTF8.self)
        // A flip may turn the marker into plain text (then it is not the
        // value any more, and passes through as a different string) but it
        // must never open to the original plaintext.
        if let opened = try? SealedValue.open(text, using: keyring, context: context) {
          #expect(!SealedValue.isSealed(text), "bit \(bit) of byte \(index) opened")
          #expect(opened == text)
        }
        flips += 1
      }
    }
    #expect(flips == bytes.count * 8)
  }

  @Test func everySingleBitFlipOfThePayloadBytesFailsAuthentication() throws {
    let sealed = try #require(try SealedValue.parse(try SealedValue.seal("payload", using: keyring)))
    let combined = sealed.box.combined
    for index in combined.indices {
      for bit in 0..<8 {
        var mutated = combined
        mutated[index] ^= 1 << bit
        let text = sealed.marker + Base64.encode(mutated)
        #expect(throws: TaskCryptoError.authenticationFailed) { try SealedValue.open(text, using: keyring) }
      }
    }
  }

  @Test func nonUTF8PlaintextIsRefusedAsText() throws {
    let sealed = try SealedValue.seal(bytes: [0xff, 0xfe], using: keyring.primary)
    #expect(throws: TaskCryptoError.invalidUTF8) { try SealedValue.open(sealed, using: keyring) }
    #expect(try SealedValue.openBytes(sealed, using: keyring) == [0xff, 0xfe])
  }
}
