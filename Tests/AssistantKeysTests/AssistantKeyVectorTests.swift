import Foundation
import TaskCrypto
import Testing

@testable import AssistantKeys

/// The schema of Vectors/assistant-key-v1.json (Vectors/README-assistant.md).
struct AssistantKeyVectorFile: Codable, Equatable {
  struct Valid: Codable, Equatable {
    var comment: String
    /// The 32 "random" bytes, lowercase hex.
    var random: String
    var key: String
    /// CRC-32 of "tk_" || body, 8 lowercase hex digits, big-endian.
    var crc32: String
    /// The last 6 characters of `key`.
    var checksum: String
    /// SHA-256 of the UTF-8 bytes of `key`, lowercase hex.
    var sha256: String
    var id: String
  }

  struct Invalid: Codable, Equatable {
    var comment: String
    /// The presented string; its UTF-8 bytes are what is checked.
    var key: String
    /// `malformed` or `bad_checksum`.
    var outcome: String
    /// For `malformed`: `wrong_length`, `missing_prefix`,
    /// `invalid_character` or `body_out_of_range`.
    var reason: String?
    /// For `wrong_length`: the length in bytes; for `invalid_character`:
    /// the offset of the first bad byte.
    var detail: Int?
  }

  var format: String
  var scannerRegex: String
  var valid: [Valid]
  var invalid: [Invalid]

  enum CodingKeys: String, CodingKey {
    case format
    case scannerRegex = "scanner_regex"
    case valid
    case invalid
  }
}

/// The deterministic generator: fixed inputs, the real code through the
/// `@testable` seam `AssistantKey(randomBytes:)`.
enum AssistantKeyVectorGenerator {
  static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  static func key(_ random: [UInt8]) throws -> AssistantKey {
    try random.withUnsafeBytes { try AssistantKey(randomBytes: $0) }
  }

  static func checksum(forPrefixAndBody text: String) -> String {
    let crc = Array(text.utf8).withUnsafeBytes { CRC32.checksum($0) }
    var digits = [UInt8](repeating: 0, count: 6)
    digits.withUnsafeMutableBytes { Base62.encode(crc, into: $0) }
    return String(decoding: digits, as: UTF8.self)
  }

  /// A base62 digit string plus one, carrying; the same length.
  static func incremented(_ digits: String) -> String {
    let alphabet = AssistantKeyStringTests.alphabet
    var utf8 = Array(digits.utf8)
    for index in utf8.indices.reversed() {
      let value = alphabet.firstIndex(of: utf8[index])!
      if value < 61 {
        utf8[index] = alphabet[value + 1]
        break
      }
      utf8[index] = alphabet[0]
    }
    return String(decoding: utf8, as: UTF8.self)
  }

  static func outcome(of error: AssistantKeyError?) -> (String, String?, Int?) {
    switch error {
    case nil: return ("success", nil, nil)
    case .badChecksum?: return ("bad_checksum", nil, nil)
    case .malformedKey(.wrongLength(let length))?: return ("malformed", "wrong_length", length)
    case .malformedKey(.missingPrefix)?: return ("malformed", "missing_prefix", nil)
    case .malformedKey(.invalidCharacter(let offset))?: return ("malformed", "invalid_character", offset)
    case .malformedKey(.bodyOutOfRange)?: return ("malformed", "body_out_of_range", nil)
    case let other?: return ("unexpected: \(other)", nil, nil)
    }
  }

  static func check(_ text: String) -> AssistantKeyError? {
    assistantError { _ = try Array(text.utf8).withUnsafeBytes { try AssistantKey.check($0) } }
  }

  static func make() throws -> AssistantKeyVectorFile {
    var inputs: [(String, [UInt8])] = [
      ("all zero bytes: the body is 43 zeros", [UInt8](repeating: 0, count: 32)),
      ("all 0xff bytes: the largest body, 2^256 - 1", [UInt8](repeating: 0xff, count: 32)),
      ("the value 1: leading zero digits are kept", [UInt8](repeating: 0, count: 31) + [1]),
      ("bytes 0x00 to 0x1f", (0..<32).map { UInt8($0) }),
    ]
    for index in 1...4 {
      let bytes = SHA256.hash(data: Array("TaskKey assistant-key vector \(index)".utf8)).bytes
      inputs.append(("SHA-256(\"TaskKey assistant-key vector \(index)\")", bytes))
    }
    var valid = [AssistantKeyVectorFile.Valid]()
    for (comment, random) in inputs {
      let key = try key(random)
      let text = key.testString
      let crc = Array(text.utf8.prefix(46)).withUnsafeBytes { CRC32.checksum($0) }
      valid.append(
        .init(
          comment: comment, random: hex(random), key: text, crc32: String(format: "%08x", crc),
          checksum: String(text.suffix(6)), sha256: key.digest.hex, id: key.id.text))
    }

    let good = valid[4].key
    let goodUTF8 = Array(good.utf8)
    func replacing(_ offset: Int, with char: Character) -> String {
      var utf8 = goodUTF8
      utf8[offset] = char.asciiValue!
      return String(decoding: utf8, as: UTF8.self)
    }
    let flippedCase: String = {
      let offset = goodUTF8[3..<46].firstIndex { (0x61...0x79).contains($0) }!
      return replacing(offset, with: Character(Unicode.Scalar(goodUTF8[offset] - 32)))
    }()
    let maximum = String(decoding: Base62.maximumBody, as: UTF8.self)
    let twoTo256 = "tk_" + incremented(maximum)
    let zBody = "tk_" + String(repeating: "z", count: 43)
    let bodyChanged = replacing(20, with: goodUTF8[20] == UInt8(ascii: "A") ? "B" : "A")
    let checksumChanged = replacing(50, with: goodUTF8[50] == UInt8(ascii: "0") ? "1" : "0")

    let cases: [(String, String)] = [
      ("empty string", ""),
      ("the prefix alone", "tk_"),
      ("the last character cut off (51 bytes)", String(good.dropLast())),
      ("a trailing newline is not trimmed by the library (53 bytes)", good + "\n"),
      ("a leading space (53 bytes)", " " + good),
      ("upper-case prefix", "TK_" + good.dropFirst(3)),
      ("dash instead of underscore", "tk-" + good.dropFirst(3)),
      ("another prefix", "gh_" + good.dropFirst(3)),
      ("'-' inside the body", replacing(10, with: "-")),
      ("'_' inside the checksum", replacing(48, with: "_")),
      ("a two-byte UTF-8 character in place of two digits", good.prefix(30) + "é" + good.dropFirst(32)),
      ("body of 43 'z': above 2^256 - 1, with a correct checksum", zBody + checksum(forPrefixAndBody: zBody)),
      ("body equal to 2^256, with a correct checksum", twoTo256 + checksum(forPrefixAndBody: twoTo256)),
      ("one body character changed", bodyChanged),
      ("one checksum character changed", checksumChanged),
      ("one body letter's case flipped", flippedCase),
      ("checksum 'zzzzzz' is above 2^32 - 1", String(good.dropLast(6)) + "zzzzzz"),
      ("two valid keys' bodies and checksums swapped", String(valid[5].key.prefix(46)) + good.suffix(6)),
    ]
    let invalid = cases.map { comment, text in
      let (outcome, reason, detail) = outcome(of: check(text))
      return AssistantKeyVectorFile.Invalid(
        comment: comment, key: text, outcome: outcome, reason: reason, detail: detail)
    }
    return AssistantKeyVectorFile(
      format: "taskkey assistant-key v1", scannerRegex: AssistantKey.scannerPattern, valid: valid, invalid: invalid)
  }
}

@Suite struct AssistantKeyVectorGenerationTests {
  static let url = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors/assistant-key-v1.json")

  /// `make vectors` (TASKKEY_WRITE_VECTORS=1) rewrites the file; otherwise
  /// the checked-in file must equal what the generator makes now.
  @Test func checkedInVectorsMatchTheGenerator() throws {
    let generated = try AssistantKeyVectorGenerator.make()
    if ProcessInfo.processInfo.environment["TASKKEY_WRITE_VECTORS"] == "1" {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
      try (encoder.encode(generated) + Data("\n".utf8)).write(to: Self.url)
    }
    let stored = try JSONDecoder().decode(AssistantKeyVectorFile.self, from: Data(contentsOf: Self.url))
    #expect(
      stored == generated, "Vectors/assistant-key-v1.json drifted from the generator; run 'make vectors' and review")
  }

  /// Each stored vector, checked against the code independently of the generator.
  @Test func everyStoredVectorGivesItsStatedOutcome() throws {
    let stored = try JSONDecoder().decode(AssistantKeyVectorFile.self, from: Data(contentsOf: Self.url))
    #expect(stored.valid.count >= 8)
    #expect(stored.invalid.count >= 18)
    for vector in stored.valid {
      let random = try #require(SHA256Digest(hex: vector.random)).bytes
      let key = try AssistantKeyVectorGenerator.key(random)
      #expect(key.testString == vector.key, "\(vector.comment)")
      #expect(SHA256.hash(data: Array(vector.key.utf8)).hex == vector.sha256)
      #expect(AssistantKeyID(digest: SHA256Digest(hex: vector.sha256)!).text == vector.id)
      #expect(vector.key.hasSuffix(vector.checksum))
      #expect(AssistantKeyVectorGenerator.check(vector.key) == nil)
    }
    for vector in stored.invalid {
      let (outcome, reason, detail) = AssistantKeyVectorGenerator.outcome(
        of: AssistantKeyVectorGenerator.check(vector.key))
      #expect(outcome == vector.outcome, "\(vector.comment)")
      #expect(reason == vector.reason, "\(vector.comment)")
      #expect(detail == vector.detail, "\(vector.comment)")
      #expect(["malformed", "bad_checksum"].contains(vector.outcome), "\(vector.comment)")
    }
  }
}

/// The schema of Vectors/assistant-registry-v1.json (Vectors/README-assistant.md).
struct AssistantRegistryVectorFile: Codable, Equatable {
  struct Presented: Codable, Equatable {
    var key: String
    /// `success`, `revoked`, `expired` or `unknown`.
    var outcome: String
    var id: String
    var name: String?
    var trust: String?
    var grants: [String]?
  }

  struct Invalid: Codable, Equatable {
    var comment: String
    var registry: String
    /// `authentication_failed`, `malformed` or `unsupported_version`.
    var outcome: String
  }

  var format: String
  /// The 32-byte integrity key, lowercase hex.
  var integrityKey: String
  /// The time of every verify, Unix seconds.
  var now: Int64
  var registry: String
  var presented: [Presented]
  var invalid: [Invalid]

  enum CodingKeys: String, CodingKey {
    case format
    case integrityKey = "integrity_key"
    case now
    case registry
    case presented
    case invalid
  }
}

extension AssistantKeyVectorGenerator {
  static let registryNow: Int64 = 1_800_000_200

  static func integrityKey() throws -> SymmetricKey {
    try [UInt8](0..<32).withUnsafeBytes { try SymmetricKey(copying: $0) }
  }

  /// Re-authenticates edited registry text under the vector key, so that
  /// only the parsing rules can reject it.
  static func resealed(_ text: String, key: SymmetricKey) -> String {
    let body = String(text[..<text.range(of: "mac ")!.lowerBound])
    let lines = body.split(separator: "\n").map(String.init)
    let bytes = AuthenticatedFile.seal(header: lines[0], lines: Array(lines.dropFirst()), key: key)
    return String(decoding: bytes, as: UTF8.self)
  }

  static func registryOutcome(_ error: AssistantKeyError?) -> String {
    switch error {
    case nil: return "success"
    case .registryDamaged(.authenticationFailed)?: return "authentication_failed"
    case .registryDamaged(.malformed)?: return "malformed"
    case .registryDamaged(.unsupportedVersion)?: return "unsupported_version"
    case .revoked?: return "revoked"
    case .expired?: return "expired"
    case .unknownKey?: return "unknown"
    case let other?: return "unexpected: \(other)"
    }
  }

  static func makeRegistry() throws -> AssistantRegistryVectorFile {
    let keyFile = try make()
    let key = try integrityKey()
    func entry(_ index: Int) -> (AssistantKeyID, SHA256Digest) {
      let digest = SHA256Digest(hex: keyFile.valid[index].sha256)!
      return (AssistantKeyID(digest: digest), digest)
    }
    let start: Int64 = 1_800_000_000
    let (id4, d4) = entry(4)
    let (id5, d5) = entry(5)
    let (id6, d6) = entry(6)
    let (id7, d7) = entry(7)
    let contents = RegistryFormat.Contents(
      generation: 7,
      entries: [
        RegistryEntry(
          id: id4, digest: d4, created: start + 100, expires: nil, revocation: .none, trust: .standard, name: "alpha",
          grants: ["notes:read", "notes:write"]),
        RegistryEntry(
          id: id5, digest: d5, created: start, expires: nil, revocation: .revoked(start + 100), trust: .restricted,
          name: "beta", grants: []),
        RegistryEntry(
          id: id6, digest: d6, created: start, expires: nil, revocation: .until(start + 3_700), trust: .standard,
          name: "alpha", grants: ["notes:read", "notes:write"]),
        RegistryEntry(
          id: id7, digest: d7, created: start, expires: start + 150, revocation: .none, trust: .elevated, name: "gamma",
          grants: ["vault:read"]),
      ])
    let registry = String(decoding: RegistryFormat.encode(contents, key: key), as: UTF8.self)

    let fixture = try RegistryFixture()
    fixture.clock.now = Date(timeIntervalSince1970: TimeInterval(registryNow))
    func verifyAll(_ text: String) throws -> [AssistantRegistryVectorFile.Presented] {
      try FileManager.default.createDirectory(
        atPath: fixture.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      try? FileManager.default.removeItem(atPath: fixture.registryPath)
      guard
        FileManager.default.createFile(
          atPath: fixture.registryPath, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
      else { throw CocoaError(.fileWriteUnknown) }
      let registry = try fixture.open(key: key)
      return [4, 5, 6, 7, 0].map { index in
        let vector = keyFile.valid[index]
        var identity: AssistantIdentity?
        let error = assistantError { identity = try registry.verify(vector.key) }
        return .init(
          key: vector.key, outcome: registryOutcome(error), id: vector.id, name: identity?.name,
          trust: identity?.trust.rawValue, grants: identity?.grants)
      }
    }
    let presented = try verifyAll(registry)
    let mac = String(registry[registry.range(of: "mac ")!.lowerBound...])
    let edits: [(String, String)] = [
      (
        "trust level raised, MAC unchanged", registry.replacingOccurrences(of: "restricted beta", with: "elevated beta")
      ),
      ("revocation removed, MAC unchanged", registry.replacingOccurrences(of: "revoked:1800000100", with: "-")),
      ("MAC of a correct body under another key", resealed(registry, key: try SymmetricKey.generateForVectors())),
      ("unknown version 2", registry.replacingOccurrences(of: "registry v1\n", with: "registry v2\n")),
      ("MAC line missing", String(registry.dropLast(mac.count))),
      ("trailing empty line after the MAC line", registry + "\n"),
      ("key lines out of order, re-authenticated", resealed(swapFirstTwoKeyLines(registry), key: key)),
      (
        "leading zero in a time, re-authenticated",
        resealed(registry.replacingOccurrences(of: " 1800000100 ", with: " 01800000100 "), key: key)
      ),
      ("id that does not match its digest, re-authenticated", resealed(swapIDs(registry), key: key)),
      (
        "generation 0, re-authenticated",
        resealed(registry.replacingOccurrences(of: "generation 7", with: "generation 0"), key: key)
      ),
      (
        "unknown trust level, re-authenticated",
        resealed(registry.replacingOccurrences(of: "elevated gamma", with: "root gamma"), key: key)
      ),
      ("CR LF line ends, re-authenticated", resealed(registry.replacingOccurrences(of: "\n", with: "\r\n"), key: key)),
    ]
    var invalid = [AssistantRegistryVectorFile.Invalid]()
    for (comment, text) in edits {
      let error = assistantError { _ = try verifyAll(text) }
      invalid.append(.init(comment: comment, registry: text, outcome: registryOutcome(error)))
    }
    return AssistantRegistryVectorFile(
      format: RegistryFormat.header, integrityKey: hex([UInt8](0..<32)), now: registryNow, registry: registry,
      presented: presented, invalid: invalid)
  }

  static func swapFirstTwoKeyLines(_ text: String) -> String {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    lines.swapAt(2, 3)
    return lines.joined(separator: "\n")
  }

  static func swapIDs(_ text: String) -> String {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var first = lines[2].split(separator: " ").map(String.init)
    var second = lines[3].split(separator: " ").map(String.init)
    (first[1], second[1]) = (second[1], first[1])
    lines[2] = first.joined(separator: " ")
    lines[3] = second.joined(separator: " ")
    return lines.joined(separator: "\n")
  }
}

extension SymmetricKey {
  /// A fixed "other" key for vectors: bytes 0xff down to 0xe0.
  static func generateForVectors() throws -> SymmetricKey {
    try (0..<32).map { UInt8(0xff - $0) }.withUnsafeBytes { try SymmetricKey(copying: $0) }
  }
}

@Suite struct AssistantRegistryVectorGenerationTests {
  static let url = AssistantKeyVectorGenerationTests.url.deletingLastPathComponent()
    .appendingPathComponent("assistant-registry-v1.json")

  @Test func checkedInRegistryVectorsMatchTheGenerator() throws {
    let generated = try AssistantKeyVectorGenerator.makeRegistry()
    if ProcessInfo.processInfo.environment["TASKKEY_WRITE_VECTORS"] == "1" {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
      try (encoder.encode(generated) + Data("\n".utf8)).write(to: Self.url)
    }
    let stored = try JSONDecoder().decode(AssistantRegistryVectorFile.self, from: Data(contentsOf: Self.url))
    #expect(stored == generated, "Vectors/assistant-registry-v1.json drifted from the generator")
    #expect(stored.presented.map(\.outcome) == ["success", "revoked", "success", "expired", "unknown"])
    #expect(
      stored.invalid.allSatisfy { ["authentication_failed", "malformed", "unsupported_version"].contains($0.outcome) })
  }
}
