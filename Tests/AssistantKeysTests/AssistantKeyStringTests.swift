import Foundation
import TaskCrypto
import Testing

@testable import AssistantKeys

@Suite struct AssistantKeyStringTests {
  static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

  /// The 32 bytes a key body encodes (test-side base62 decoder).
  static func bodyBytes(_ key: String) -> [UInt8] {
    var limbs = [UInt32](repeating: 0, count: 8)
    for char in Array(key.utf8)[3..<46] {
      var carry = UInt64(alphabet.firstIndex(of: char)!)
      for index in limbs.indices.reversed() {
        let value = UInt64(limbs[index]) * 62 + carry
        limbs[index] = UInt32(truncatingIfNeeded: value)
        carry = value >> 32
      }
    }
    return limbs.flatMap { limb in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: limb >> $0) } }
  }

  static func check(_ text: String) -> AssistantKeyError? {
    assistantError { _ = try Array(text.utf8).withUnsafeBytes { try AssistantKey.check($0) } }
  }

  @Test func crc32MatchesTheStandardCheckValue() {
    let crc = Array("123456789".utf8).withUnsafeBytes { CRC32.checksum($0) }
    #expect(crc == 0xCBF4_3926)
  }

  @Test func base62DigitMappingCoversTheAlphabetInOrder() {
    let digits = (0..<62).map { Base62.digit(UInt32($0)) }
    #expect(digits == Self.alphabet)
    #expect(Self.alphabet.indices.allSatisfy { Base62.value(of: Self.alphabet[$0]) == UInt8($0) })
  }

  @Test func mintedKeyIsTkPrefixAnd49Base62CharactersAndPassesItsOwnCheck() throws {
    let key = try AssistantKey.generate()
    let text = key.testString
    #expect(text.utf8.count == 52)
    #expect(text.hasPrefix("tk_"))
    #expect(text.utf8.dropFirst(3).allSatisfy { Self.alphabet.contains($0) })
    let digest = try key.withUnsafeBytes { try AssistantKey.check($0) }
    #expect(digest == SHA256.hash(data: Array(text.utf8)))
    #expect(key.id == AssistantKeyID(digest: digest))
  }

  @Test func bodyDecodesBackToTheRandomBytes() throws {
    let random = SecureRandom.bytes(count: 32)
    let key = try random.withUnsafeBytes { try AssistantKey(randomBytes: $0) }
    #expect(Self.bodyBytes(key.testString) == random)
  }

  @Test func tenThousandMintedKeysAreAllDistinct() throws {
    var seen = Set<String>()
    var ids = Set<AssistantKeyID>()
    for _ in 0..<10_000 {
      let key = try AssistantKey.generate()
      seen.insert(key.testString)
      ids.insert(key.id)
    }
    #expect(seen.count == 10_000)
    #expect(ids.count == 10_000)
  }

  @Test func tenThousandKeysHaveExactLengthAndNoFixedBytesOrPositions() throws {
    let count = 10_000
    var byteValues = [Set<UInt8>](repeating: [], count: 32)
    var charCounts = [[Int]](repeating: [Int](repeating: 0, count: 128), count: 52)
    for _ in 0..<count {
      let text = try AssistantKey.generate().testString
      let utf8 = Array(text.utf8)
      #expect(utf8.count == AssistantKey.byteCount)
      for (index, byte) in Self.bodyBytes(text).enumerated() { byteValues[index].insert(byte) }
      for (index, char) in utf8.enumerated() { charCounts[index][Int(char)] += 1 }
    }
    // Every one of the 32 random bytes takes (nearly) all 256 values.
    #expect(byteValues.allSatisfy { $0.count >= 250 })
    // Body digits 2 to 43 are uniform over 62 symbols: each count is
    // binomial(10,000, 1/62), mean 161, sd 12.6; 80 and 250 are > 6 sd out.
    for position in 4..<46 {
      let counts = Self.alphabet.map { charCounts[position][Int($0)] }
      #expect(counts.allSatisfy { (80...250).contains($0) }, "position \(position): \(counts)")
    }
    // The first body digit covers 0-60 ("0" to "y"); 2^256 - 1 starts with "y".
    let first = Set(charCounts[3].indices.filter { charCounts[3][$0] > 0 })
    #expect(first.count >= 58)
    #expect(charCounts[3][Int(UInt8(ascii: "z"))] == 0)
    // The checksum's first digit is 0-4 (2^32 < 5 * 62^5); the others cover all 62.
    #expect(Set(charCounts[46].indices.filter { charCounts[46][$0] > 0 }).count == 5)
    for position in 47..<52 {
      #expect(charCounts[position].filter { $0 > 0 }.count == 62)
    }
  }

  @Test func checksumCatchesEverySingleCharacterChangeInATenThousandSample() throws {
    let replacements = Self.alphabet + Array("_-+/= ".utf8)
    var rejected = 0
    for _ in 0..<10_000 {
      var utf8 = Array(try AssistantKey.generate().testString.utf8)
      let position = Int.random(in: 0..<utf8.count)
      let original = utf8[position]
      repeat { utf8[position] = replacements.randomElement()! } while utf8[position] == original
      let error = Self.check(String(decoding: utf8, as: UTF8.self))
      switch error {
      case .malformedKey?, .badChecksum?: rejected += 1
      default: Issue.record("change at \(position) gave \(String(describing: error))")
      }
    }
    #expect(rejected == 10_000)
  }

  @Test func everySingleCharacterChangeOfTwentyKeysIsRejected() throws {
    for _ in 0..<20 {
      let utf8 = Array(try AssistantKey.generate().testString.utf8)
      for position in 3..<utf8.count {
        for replacement in Self.alphabet where replacement != utf8[position] {
          var changed = utf8
          changed[position] = replacement
          let error = Self.check(String(decoding: changed, as: UTF8.self))
          // Inside the body a change can also push the value out of range.
          #expect(error == .badChecksum || error == .malformedKey(.bodyOutOfRange))
        }
      }
    }
  }

  @Test func malformedStringsAreCaughtBeforeAnyLookupWithTheirReason() throws {
    let good = try AssistantKey.generate().testString
    #expect(Self.check("") == .malformedKey(.wrongLength(0)))
    #expect(Self.check(String(good.dropLast())) == .malformedKey(.wrongLength(51)))
    #expect(Self.check(good + "\n") == .malformedKey(.wrongLength(53)))
    #expect(Self.check("TK_" + good.dropFirst(3)) == .malformedKey(.missingPrefix))
    #expect(Self.check("tk-" + good.dropFirst(3)) == .malformedKey(.missingPrefix))
    var utf8 = Array(good.utf8)
    utf8[10] = UInt8(ascii: "-")
    #expect(Self.check(String(decoding: utf8, as: UTF8.self)) == .malformedKey(.invalidCharacter(offset: 10)))
    let outOfRange = "tk_" + String(repeating: "z", count: 43)
    let crc = Array(outOfRange.utf8).withUnsafeBytes { CRC32.checksum($0) }
    var checksum = [UInt8](repeating: 0, count: 6)
    checksum.withUnsafeMutableBytes { Base62.encode(crc, into: $0) }
    #expect(Self.check(outOfRange + String(decoding: checksum, as: UTF8.self)) == .malformedKey(.bodyOutOfRange))
  }

  @Test func largestBodyIsTwoTo256MinusOne() throws {
    let key = try [UInt8](repeating: 0xff, count: 32).withUnsafeBytes { try AssistantKey(randomBytes: $0) }
    #expect(key.testString.dropFirst(3).prefix(43) == Substring(String(decoding: Base62.maximumBody, as: UTF8.self)))
    #expect(Self.check(key.testString) == nil)
  }

  @Test func descriptionsAreRedactedAndNeverShowTheKey() throws {
    let key = try AssistantKey.generate()
    let secret = key.testString
    for text in [key.description, key.debugDescription, "\(key)", String(reflecting: key)] {
      #expect(!text.contains(secret))
      #expect(!text.contains(String(secret.dropFirst(3).prefix(12))))
      #expect(text.contains("redacted"))
    }
  }

  @Test func scannerPatternMatchesKeysAndNotIds() throws {
    let key = try AssistantKey.generate()
    let regex = try NSRegularExpression(pattern: AssistantKey.scannerPattern)
    let text = "export TASKER_KEY=\(key.testString) # id \(key.id)"
    let matches = regex.matches(in: text, range: NSRange(text.startIndex..., in: text))
    #expect(matches.count == 1)
    #expect(matches.first.map { (text as NSString).substring(with: $0.range) } == key.testString)
    let longer = "x" + key.testString + "y"
    #expect(regex.matches(in: longer, range: NSRange(longer.startIndex..., in: longer)).isEmpty)
  }

  @Test func publicIdIsTkidAnd16HexDigitsAndParses() throws {
    let key = try AssistantKey.generate()
    #expect(key.id.text.count == 21)
    #expect(AssistantKeyID(key.id.text) == key.id)
    #expect(AssistantKeyID("tkid_ABCDEF0123456789") == nil)
    #expect(AssistantKeyID("tkid_0123") == nil)
    #expect(AssistantKeyID("tk_0123456789abcdef") == nil)
  }
}
