import Testing

@testable import TaskCrypto

@Suite("Secret bytes, keys and randomness")
struct SecretsTests {
  @Test func descriptionsNeverShowKeyBytes() throws {
    let key = try NoteKey.generate()
    let hex = key.key.withUnsafeBytes { Hex.encode($0) }
    for text in [
      "\(key)", "\(key.key)", "\(key.key.storage)", String(reflecting: key.key.storage), "\(try Keyring.generate())",
    ] {
      #expect(!text.contains(hex.prefix(8)))
      #expect(text.contains("redacted") || text.hasPrefix("Keyring("))
    }
  }

  @Test func secureBytesCompareByContentInConstantTimeHelper() throws {
    let a = try [UInt8](repeating: 1, count: 32).withUnsafeBytes { try SecureBytes(copying: $0) }
    let b = try [UInt8](repeating: 1, count: 32).withUnsafeBytes { try SecureBytes(copying: $0) }
    let c = try [UInt8](repeating: 2, count: 32).withUnsafeBytes { try SecureBytes(copying: $0) }
    #expect(a == b)
    #expect(a != c)
    #expect(a != (try SecureBytes(zeroedCount: 31)))
  }

  @Test func zeroLengthSecureBytesAreUsable() throws {
    let empty = try SecureBytes(zeroedCount: 0)
    #expect(empty.count == 0)
    #expect(empty.withUnsafeBytes { $0.count } == 0)
  }

  @Test func constantTimeEqualsHandlesLengthsAndEmptyBuffers() {
    #expect(ConstantTime.equals([UInt8](), [UInt8]()))
    #expect(!ConstantTime.equals([UInt8](), [0]))
    #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
    #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
  }

  @Test func randomKeysDiffer() throws {
    var seen = Set<String>()
    for _ in 0..<200 {
      let key = try SymmetricKey.generate()
      seen.insert(key.withUnsafeBytes { Hex.encode($0) })
    }
    #expect(seen.count == 200)
  }

  @Test func randomBytesHaveNoStuckBits() {
    // 4096 random bytes: every bit position is set in some byte and clear in another.
    let bytes = SecureRandom.bytes(count: 4096)
    let orAll = bytes.reduce(0, |)
    let andAll = bytes.reduce(0xff, &)
    #expect(orAll == 0xff)
    #expect(andAll == 0)
  }
}
