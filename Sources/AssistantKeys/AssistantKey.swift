import TaskCrypto

/// A minted assistant key: the 52-character string `tk_…` that an assistant
/// presents, held in locked memory and shown to the caller exactly once.
///
/// Grammar (version 1, SECURITY.md "Assistant key string"):
///
///     key      = "tk_" body checksum
///     body     = 43 base62 digits: the 256 random bits as a big-endian
///                unsigned integer, most significant digit first, padded
///                with "0"; its value is below 2^256
///     checksum = 6 base62 digits: CRC-32 (IEEE 802.3, as zlib's crc32) of
///                the 46 ASCII bytes "tk_" || body, as a big-endian integer
///     base62   = "0"-"9" (0-9), "A"-"Z" (10-35), "a"-"z" (36-61)
///
/// A scanner regex: `\btk_[0-9A-Za-z]{49}\b`.
///
/// The bytes are reachable only through `withUnsafeBytes`; `description`
/// shows the public id and never the key. The registry stores only
/// `SHA-256(key string)`.
public struct AssistantKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
  /// The length of every version-1 key string in bytes (and characters): 52.
  public static let byteCount = 52
  /// The prefix every key string starts with: `tk_`.
  public static let prefix = "tk_"
  /// A regular expression (PCRE, Python `re`, Go RE2, GNU `grep -E`) that
  /// matches a key in text, for secret scanners; the checksum then removes
  /// false positives.
  public static let scannerPattern = "\\btk_[0-9A-Za-z]{49}\\b"

  static let prefixBytes: [UInt8] = Array(prefix.utf8)
  static let bodyLength = 43
  static let checksumLength = 6
  static let randomByteCount = 32

  let storage: SecureBytes
  /// The key's public id, safe to print and log.
  public let id: AssistantKeyID
  /// SHA-256 of the 52 ASCII bytes of the key string: what the registry stores.
  public let digest: SHA256Digest

  /// Makes a new key from 256 bits of the operating system's CSPRNG.
  ///
  /// - Throws: `AssistantKeyError.crypto` when locked memory cannot be
  ///   allocated.
  static func generate() throws -> AssistantKey {
    do {
      let random = try SecureBytes.random(count: randomByteCount)
      return try random.withUnsafeBytes { try AssistantKey(randomBytes: $0) }
    } catch let error as TaskCryptoError {
      throw AssistantKeyError.crypto(error)
    }
  }

  /// The test seam: the key string for 32 chosen "random" bytes. Only the
  /// vector generator and `@testable` tests may call it.
  init(randomBytes: UnsafeRawBufferPointer) throws {
    precondition(randomBytes.count == Self.randomByteCount, "assistant keys encode exactly 32 bytes")
    let storage = try SecureBytes(zeroedCount: Self.byteCount)
    storage.withUnsafeMutableBytes { out in
      for (index, byte) in Self.prefixBytes.enumerated() { out[index] = byte }
      let body = UnsafeMutableRawBufferPointer(rebasing: out[3..<(3 + Self.bodyLength)])
      Base62.encode(randomBytes, into: body)
      let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: out[0..<(3 + Self.bodyLength)]))
      let tail = UnsafeMutableRawBufferPointer(rebasing: out[(3 + Self.bodyLength)...])
      Base62.encode(crc, into: tail)
    }
    self.storage = storage
    self.digest = storage.withUnsafeBytes { SHA256.hash(data: $0) }
    self.id = AssistantKeyID(digest: digest)
  }

  /// Calls `body` with the 52 ASCII bytes of the key string. Write them
  /// where they must go (standard output, a secret store); do not copy them
  /// into a `String`, which cannot be wiped.
  public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
    try storage.withUnsafeBytes(body)
  }

  /// Always `AssistantKey(tkid_…, redacted)`: the public id, never the key.
  public var description: String { "AssistantKey(\(id), redacted)" }
  /// The same redacted text as `description`.
  public var debugDescription: String { description }

  /// Checks a presented key string against the grammar and its checksum,
  /// without looking anything up, and returns the SHA-256 digest the
  /// registry is keyed by.
  ///
  /// - Parameter presented: the bytes as presented, with nothing trimmed.
  /// - Returns: `SHA-256(presented)`.
  /// - Throws: `AssistantKeyError.malformedKey` for a wrong length, prefix,
  ///   character or an out-of-range body; `.badChecksum` when the grammar
  ///   holds but the checksum does not match (a typo or a truncation).
  public static func check(_ presented: UnsafeRawBufferPointer) throws(AssistantKeyError) -> SHA256Digest {
    guard presented.count == byteCount else {
      throw AssistantKeyError.malformedKey(.wrongLength(presented.count))
    }
    guard presented[0] == prefixBytes[0], presented[1] == prefixBytes[1], presented[2] == prefixBytes[2] else {
      throw AssistantKeyError.malformedKey(.missingPrefix)
    }
    for offset in 3..<byteCount where Base62.value(of: presented[offset]) == nil {
      throw AssistantKeyError.malformedKey(.invalidCharacter(offset: offset))
    }
    let body = UnsafeRawBufferPointer(rebasing: presented[3..<(3 + bodyLength)])
    guard Base62.isBelowTwoTo256(body) else { throw AssistantKeyError.malformedKey(.bodyOutOfRange) }
    let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: presented[0..<(3 + bodyLength)]))
    var expected = [UInt8](repeating: 0, count: checksumLength)
    expected.withUnsafeMutableBytes { Base62.encode(crc, into: $0) }
    guard ConstantTime.equals(UnsafeRawBufferPointer(rebasing: presented[(3 + bodyLength)...]), expected) else {
      throw AssistantKeyError.badChecksum
    }
    return SHA256.hash(data: presented)
  }
}

/// Base62 with the alphabet `0-9A-Za-z`, which is in ASCII order, so that
/// comparing two digit strings of one length byte by byte compares their
/// values.
enum Base62 {
  /// The 43 digits of 2^256 - 1: a body must not compare above it.
  static let maximumBody: [UInt8] = {
    var digits = [UInt8](repeating: 0, count: AssistantKey.bodyLength)
    let ones = [UInt8](repeating: 0xff, count: AssistantKey.randomByteCount)
    ones.withUnsafeBytes { source in digits.withUnsafeMutableBytes { encode(source, into: $0) } }
    return digits
  }()

  /// The ASCII digit for a value 0...61, without a table lookup or a branch
  /// on the value (the value is secret while minting).
  @inline(__always)
  static func digit(_ value: UInt32) -> UInt8 {
    let v = Int32(bitPattern: value)
    let atLeast10 = ((9 - v) >> 31) & 7  // "A" is 7 above "9" + 1
    let atLeast36 = ((35 - v) >> 31) & 6  // "a" is 6 above "Z" + 1
    return UInt8(truncatingIfNeeded: v + 48 + atLeast10 + atLeast36)
  }

  /// The value of one base62 digit, or nil.
  @inline(__always)
  static func value(of ascii: UInt8) -> UInt8? {
    switch ascii {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return ascii - 48
    case UInt8(ascii: "A")...UInt8(ascii: "Z"): return ascii - 55
    case UInt8(ascii: "a")...UInt8(ascii: "z"): return ascii - 61
    default: return nil
    }
  }

  /// Writes the big-endian unsigned integer `bytes` as exactly
  /// `output.count` base62 digits, most significant first, zero-padded.
  /// Runs a fixed number of steps for a given size.
  static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
    precondition(bytes.count % 4 == 0)
    var limbs = [UInt32](repeating: 0, count: bytes.count / 4)
    for index in limbs.indices {
      limbs[index] =
        UInt32(bytes[4 * index]) << 24 | UInt32(bytes[4 * index + 1]) << 16
        | UInt32(bytes[4 * index + 2]) << 8 | UInt32(bytes[4 * index + 3])
    }
    for position in stride(from: output.count - 1, through: 0, by: -1) {
      var remainder: UInt64 = 0
      for index in limbs.indices {
        let current = remainder << 32 | UInt64(limbs[index])
        limbs[index] = UInt32(truncatingIfNeeded: current / 62)
        remainder = current % 62
      }
      output[position] = digit(UInt32(remainder))
    }
    // Dividing down to zero also leaves no secret limb behind in `limbs`.
    precondition(limbs.allSatisfy { $0 == 0 }, "value does not fit in \(output.count) base62 digits")
  }

  /// Writes a 32-bit value as exactly `output.count` base62 digits.
  static func encode(_ value: UInt32, into output: UnsafeMutableRawBufferPointer) {
    let bytes: [UInt8] = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
    bytes.withUnsafeBytes { encode($0, into: output) }
  }

  /// Whether 43 valid base62 digits denote a value below 2^256.
  static func isBelowTwoTo256(_ body: UnsafeRawBufferPointer) -> Bool {
    precondition(body.count == maximumBody.count)
    for index in 0..<body.count where body[index] != maximumBody[index] {
      return body[index] < maximumBody[index]
    }
    return true
  }
}

/// CRC-32 as in IEEE 802.3 and zlib: reflected polynomial 0xEDB88320,
/// initial value and final XOR 0xFFFFFFFF. Computed bit by bit without a
/// table, so its timing does not depend on the bytes.
enum CRC32 {
  /// The CRC-32 of `bytes`; `checksum("123456789") == 0xCBF43926`.
  static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc ^= UInt32(byte)
      for _ in 0..<8 {
        crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1)))
      }
    }
    return ~crc
  }
}
