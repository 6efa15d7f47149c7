import Foundation
import TaskCrypto
import TaskKeyTestSupport
import Testing

@testable import AssistantKeys
@testable import TaskKeyVectors

/// The deterministic generator of Vectors/assistant-key-v1.json and
/// Vectors/assistant-registry-v1.json: fixed inputs through the real code
/// (the `@testable` seam `AssistantKey(randomBytes:)` for key strings).
enum AssistantKeyVectorGenerator {
  typealias KeyFile = AssistantKeyVectors.KeyFile
  typealias RegistryFile = AssistantKeyVectors.RegistryFile

  static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  static func key(_ random: [UInt8]) throws -> AssistantKey {
    try random.withUnsafeBytes { try AssistantKey(randomBytes: $0) }
  }

  /// `tk_` + body with its correct checksum appended, even for a body no
  /// key could have.
  static func withChecksum(_ prefixAndBody: String) -> String {
    let crc = Array(prefixAndBody.utf8).withUnsafeBytes { CRC32.checksum($0) }
    var digits = [UInt8](repeating: 0, count: 6)
    digits.withUnsafeMutableBytes { Base62.encode(crc, into: $0) }
    return prefixAndBody + String(decoding: digits, as: UTF8.self)
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

  static func validKeys() throws -> [(comment: String, random: [UInt8], key: AssistantKey)] {
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
    return try inputs.map { ($0.0, $0.1, try key($0.1)) }
  }

  static func makeKeyFile() throws -> KeyFile {
    var tests = [KeyFile.Test]()
    let valid = try validKeys()
    for (comment, random, key) in valid {
      let text = key.testString
      let crc = Array(text.utf8.prefix(46)).withUnsafeBytes { CRC32.checksum($0) }
      tests.append(
        KeyFile.Test(
          id: tests.count + 1, comment: comment, key: text, result: "valid", random: hex(random),
          crc32: String(format: "%08x", crc), checksum: String(text.suffix(6)), sha256: key.digest.hex,
          publicID: key.id.text))
    }

    let good = valid[4].key.testString
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
      (
        "body of 43 'z': above 2^256 - 1, with a correct checksum",
        withChecksum("tk_" + String(repeating: "z", count: 43))
      ),
      ("body equal to 2^256, with a correct checksum", withChecksum("tk_" + incremented(maximum))),
      ("one body character changed", replacing(20, with: goodUTF8[20] == UInt8(ascii: "A") ? "B" : "A")),
      ("one checksum character changed", replacing(50, with: goodUTF8[50] == UInt8(ascii: "0") ? "1" : "0")),
      ("one body letter's case flipped", flippedCase),
      ("checksum 'zzzzzz' is above 2^32 - 1", String(good.dropLast(6)) + "zzzzzz"),
      (
        "another valid key's body with this key's checksum", String(valid[5].key.testString.prefix(46)) + good.suffix(6)
      ),
    ]
    for (comment, text) in cases {
      let (result, error, reason, detail) = AssistantKeyVectors.keyOutcome(text)
      tests.append(
        KeyFile.Test(
          id: tests.count + 1, comment: comment, key: text, result: result, error: error, reason: reason, detail: detail
        ))
    }
    return KeyFile(
      format: KeyFile.format, version: 1,
      description:
        "Assistant key strings, version 1 (SECURITY.md, 'Assistant key string'). Check each 'key' (its UTF-8 bytes, nothing trimmed) against the grammar and checksum.",
      scannerRegex: AssistantKey.scannerPattern, tests: tests)
  }

  static let registryNow: Int64 = 1_800_000_200

  /// Re-authenticates edited registry text under `key`, so that only the
  /// parsing rules can reject it.
  static func resealed(_ text: String, key: SymmetricKey) -> String {
    let body = String(text[..<text.range(of: "mac ")!.lowerBound])
    // Split on the LF byte: String would treat CR LF as one Character.
    let lines = Array(body.utf8).split(separator: 0x0a, omittingEmptySubsequences: false).dropLast()
      .map { String(decoding: $0, as: UTF8.self) }
    let bytes = AuthenticatedFile.seal(header: lines[0], lines: Array(lines.dropFirst()), key: key)
    return String(decoding: bytes, as: UTF8.self)
  }

  static func editingKeyLines(_ text: String, _ edit: (inout [String]) -> Void) -> String {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    edit(&lines)
    return lines.joined(separator: "\n")
  }

  static func makeRegistryFile() throws -> RegistryFile {
    let valid = try validKeys()
    let integrityKey = try [UInt8](0..<32).withUnsafeBytes { try SymmetricKey(copying: $0) }
    let otherKey = try (0..<32).map { UInt8(0xff - $0) }.withUnsafeBytes { try SymmetricKey(copying: $0) }
    let start: Int64 = 1_800_000_000
    func entry(
      _ index: Int, created: Int64, expires: Int64?, revocation: RegistryEntry.Revocation, trust: TrustLevel,
      name: String, grants: [String]
    ) -> RegistryEntry {
      let key = valid[index].key
      return RegistryEntry(
        id: key.id, digest: key.digest, created: created, expires: expires, revocation: revocation, trust: trust,
        name: name, grants: grants)
    }
    let contents = RegistryFormat.Contents(
      generation: 7,
      entries: [
        entry(
          4, created: start + 100, expires: start + 86_500, revocation: .none, trust: .standard, name: "alpha",
          grants: ["notes:read", "notes:write"]),
        entry(
          5, created: start, expires: nil, revocation: .revoked(start + 100), trust: .restricted, name: "beta",
          grants: []),
        entry(
          6, created: start, expires: nil, revocation: .until(start + 3_700), trust: .standard, name: "alpha",
          grants: ["notes:read", "notes:write"]),
        entry(
          7, created: start, expires: start + 150, revocation: .none, trust: .elevated, name: "gamma",
          grants: ["vault:read"]),
      ])
    let registry = String(decoding: RegistryFormat.encode(contents, key: integrityKey), as: UTF8.self)

    var tests = [RegistryFile.Test]()
    func add(_ comment: String, key: Int, registry edited: String? = nil) {
      let text = valid[key].key.testString
      let (result, error, damage, identity) = AssistantKeyVectors.registryOutcome(
        key: text, registry: edited ?? registry, integrityKey: integrityKey, now: registryNow)
      tests.append(
        RegistryFile.Test(
          id: tests.count + 1, comment: comment, key: text, registry: edited, result: result,
          publicID: identity?.id.text, name: identity?.name, trust: identity?.trust.rawValue, grants: identity?.grants,
          expires: identity?.expires.map { Int64($0.timeIntervalSince1970) }, error: error, damage: damage))
    }
    add("an active key with an expiry", key: 4)
    add("a revoked key", key: 5)
    add("the old key of a rotation, inside its overlap window (ends at 1800003700)", key: 6)
    add("an expired key", key: 7)
    add("a well-formed key that is not registered", key: 0)

    let mac = String(registry[registry.range(of: "mac ")!.lowerBound...])
    let damaged: [(String, String)] = [
      (
        "trust level raised, MAC unchanged", registry.replacingOccurrences(of: "restricted beta", with: "elevated beta")
      ),
      ("revocation removed, MAC unchanged", registry.replacingOccurrences(of: "revoked:1800000100", with: "-")),
      (
        "a digest line added, MAC unchanged",
        registry.replacingOccurrences(of: "\nmac ", with: "\n" + extraLine(valid) + "mac ")
      ),
      ("the right body with a MAC under another key", resealed(registry, key: otherKey)),
      // Fixed in issue 22 (item 11): this case said `unsupported_version`,
      // which only a reader of version 1 alone gives.
      (
        "a version-1 body under the version-2 version line: read as version 2, its header MAC fails",
        registry.replacingOccurrences(of: "registry v1\n", with: "registry v2\n")
      ),
      ("MAC line missing", String(registry.dropLast(mac.count))),
      ("an empty line after the MAC line", registry + "\n"),
      (
        "key lines out of order, re-authenticated",
        resealed(editingKeyLines(registry) { $0.swapAt(2, 3) }, key: integrityKey)
      ),
      (
        "a leading zero in a time, re-authenticated",
        resealed(registry.replacingOccurrences(of: " 1800000100 ", with: " 01800000100 "), key: integrityKey)
      ),
      (
        "an id that is not derived from its digest, re-authenticated",
        resealed(
          editingKeyLines(registry) { lines in
            var first = lines[2].split(separator: " ").map(String.init)
            var second = lines[3].split(separator: " ").map(String.init)
            (first[1], second[1]) = (second[1], first[1])
            lines[2] = first.joined(separator: " ")
            lines[3] = second.joined(separator: " ")
          }, key: integrityKey)
      ),
      (
        "generation 0, re-authenticated",
        resealed(registry.replacingOccurrences(of: "generation 7", with: "generation 0"), key: integrityKey)
      ),
      (
        "an unknown trust level, re-authenticated",
        resealed(registry.replacingOccurrences(of: "elevated gamma", with: "root gamma"), key: integrityKey)
      ),
      (
        "CR LF line ends, re-authenticated",
        resealed(registry.replacingOccurrences(of: "\n", with: "\r\n"), key: integrityKey)
      ),
      (
        "unknown version 3: neither version line, read as version 1",
        registry.replacingOccurrences(of: "registry v1\n", with: "registry v3\n")
      ),
    ]
    for (comment, text) in damaged { add(comment, key: 4, registry: text) }

    return RegistryFile(
      format: RegistryFile.format, version: 1,
      description:
        "Assistant key registry, version 1 (SECURITY.md, 'Registry file'). Present each case's 'key' at time 'now' to the case's 'registry' (else the file's), authenticated with 'integrity_key'.",
      integrityKey: hex([UInt8](0..<32)), now: registryNow, registry: registry, tests: tests)
  }

  /// A line for a key the attacker made, in the right format.
  static func extraLine(_ valid: [(comment: String, random: [UInt8], key: AssistantKey)]) -> String {
    let key = valid[3].key
    return "key \(key.id) \(key.digest.hex) 1800000000 - - elevated intruder -\n"
  }
}

@Suite(.serialized) struct AssistantKeyVectorGenerationTests {
  static let vectors = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors")
  static let keyURL = vectors.appendingPathComponent("assistant-key-v1.json")
  static let registryURL = vectors.appendingPathComponent("assistant-registry-v1.json")

  /// `make vectors` (TASKKEY_WRITE_VECTORS=1) rewrites the files; otherwise
  /// the checked-in files must equal what the generator makes now.
  @Test func checkedInVectorsMatchTheGenerator() throws {
    let drifted = try CommittedVectors.drifted([
      "assistant-key-v1.json": try CommittedVectors.json(AssistantKeyVectorGenerator.makeKeyFile()),
      "assistant-registry-v1.json": try CommittedVectors.json(AssistantKeyVectorGenerator.makeRegistryFile()),
    ])
    #expect(drifted.isEmpty, "Vectors/\(drifted) drifted from the generator; run 'make vectors'")
  }

  /// The public checker passes every stored case; the counts and outcome
  /// sets are what Vectors/README.md promises.
  @Test func everyStoredVectorGivesItsStatedOutcome() throws {
    let keyReport = try #require(AssistantKeyVectors.check(Data(contentsOf: Self.keyURL)))
    #expect(keyReport == .init(format: "assistant-key", cases: 26, failures: []))
    let registryReport = try #require(AssistantKeyVectors.check(Data(contentsOf: Self.registryURL)))
    #expect(registryReport == .init(format: "assistant-registry", cases: 19, failures: []))
    let keys = try JSONDecoder().decode(AssistantKeyVectors.KeyFile.self, from: Data(contentsOf: Self.keyURL))
    #expect(Set(keys.tests.compactMap(\.error)) == ["malformed_key", "bad_checksum"])
    #expect(
      Set(keys.tests.compactMap(\.reason)) == [
        "wrong_length", "missing_prefix", "invalid_character", "body_out_of_range",
      ])
    let registry = try JSONDecoder().decode(
      AssistantKeyVectors.RegistryFile.self, from: Data(contentsOf: Self.registryURL))
    #expect(
      registry.tests.prefix(5).map { $0.error ?? $0.result } == ["valid", "revoked", "valid", "expired", "unknown_key"])
    // The version-2 line decides the reader (issue 22, item 11), as in verify.
    #expect(registry.tests[9].damage == "authentication_failed")
    #expect(registry.tests[18].damage == "unsupported_version")
    #expect(
      Set(registry.tests.dropFirst(5).compactMap(\.damage)) == [
        "authentication_failed", "malformed", "unsupported_version",
      ])
  }

  /// The checker is not a rubber stamp: a changed expectation fails.
  @Test func checkerReportsAVectorWhoseStatedOutcomeIsWrong() throws {
    var keys = try JSONDecoder().decode(AssistantKeyVectors.KeyFile.self, from: Data(contentsOf: Self.keyURL))
    keys.tests[0].sha256 = String(repeating: "0", count: 64)
    keys.tests[10].error = "bad_checksum"
    let keyReport = try #require(AssistantKeyVectors.check(JSONEncoder().encode(keys)))
    #expect(keyReport.failures.count == 2)
    var registry = try JSONDecoder().decode(
      AssistantKeyVectors.RegistryFile.self, from: Data(contentsOf: Self.registryURL))
    registry.tests[1].result = "valid"
    registry.tests[0].trust = "elevated"
    let registryReport = try #require(AssistantKeyVectors.check(JSONEncoder().encode(registry)))
    #expect(registryReport.failures.count == 2)
    #expect(AssistantKeyVectors.check(Data(#"{"format":"sealed-value","version":1}"#.utf8)) == nil)
    #expect(AssistantKeyVectors.check(Data(#"{"format":"assistant-key","version":2}"#.utf8))?.failures.count == 1)
  }

  /// The registry vectors, run through the real file-backed registry too.
  @Test func registryVectorsGiveTheSameOutcomesThroughTheRegistryFiles() throws {
    let file = try JSONDecoder().decode(AssistantKeyVectors.RegistryFile.self, from: Data(contentsOf: Self.registryURL))
    let key = try SHA256Digest(hex: file.integrityKey)!.bytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
    for test in file.tests {
      let fixture = try RegistryFixture()
      fixture.clock.now = Date(timeIntervalSince1970: TimeInterval(file.now))
      try FileManager.default.createDirectory(
        atPath: fixture.directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
      guard
        FileManager.default.createFile(
          atPath: fixture.registryPath, contents: Data((test.registry ?? file.registry).utf8),
          attributes: [.posixPermissions: 0o600])
      else { throw CocoaError(.fileWriteUnknown) }
      var identity: AssistantIdentity?
      let error = assistantError { identity = try fixture.open(key: key).verify(test.key) }
      switch (test.error, error) {
      case (nil, nil): #expect(identity?.id.text == test.publicID, "case \(test.id)")
      case ("unknown_key"?, .unknownKey?), ("revoked"?, .revoked?), ("expired"?, .expired?): break
      case ("registry_damaged"?, .registryDamaged?): break
      default: Issue.record("case \(test.id) (\(test.comment)): \(String(describing: error))")
      }
    }
  }
}
