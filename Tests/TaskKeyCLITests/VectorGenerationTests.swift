import Foundation
import TaskKeyTestSupport
import Testing

@testable import TaskCrypto
@testable import TaskKeyCLI
@testable import TaskKeyVectors

/// The deterministic generator of `Vectors/aes-256-gcm.json` and
/// `Vectors/sealed-value-v1.json`. It fails when the committed files differ
/// from what it generates; `make vectors` (TASKKEY_WRITE_VECTORS=1) rewrites
/// them. Nonces come from SHA-256 of a label through the test-only seam.
@Suite("Vector generation")
struct VectorGenerationTests {
  static let vectorsDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors")

  @Test func aesGCMVectorsMatchTheCommittedFile() throws {
    try compare(AESGCMVectors.file(), name: "aes-256-gcm.json")
  }

  @Test func sealedValueVectorsMatchTheCommittedFile() throws {
    try compare(try SealedValueVectors.file(), name: "sealed-value-v1.json")
  }

  @Test func argon2idVectorsMatchTheCommittedFile() throws {
    try compare(try Argon2idVectors.file(), name: "argon2id.json")
  }

  func compare<T: Encodable>(_ value: T, name: String) throws {
    #expect(
      try CommittedVectors.drifted(json: value, name: name).isEmpty,
      "Vectors/\(name) drifted from the generator; run 'make vectors' and review the diff")
  }
}

enum AESGCMVectors {
  static let gcmKey = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
  static let gcmNonce = "cafebabefacedbaddecaf888"
  static let gcmPlaintext =
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
    + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
  static let gcmCiphertext =
    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
    + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"

  static func file() -> AESGCMVectorFile {
    let zeroKey = String(repeating: "00", count: 32)
    let zeroNonce = String(repeating: "00", count: 12)
    var tests = [
      AESGCMVector(
        id: 1, comment: "GCM spec test case 13: empty plaintext, zero key", key: zeroKey, nonce: zeroNonce, aad: "",
        plaintext: "", ciphertext: "", tag: "530f8afbc74536b9a963b4f1c4cb738b", result: "valid", error: nil),
      AESGCMVector(
        id: 2, comment: "GCM spec test case 14: one zero block", key: zeroKey, nonce: zeroNonce, aad: "",
        plaintext: String(repeating: "00", count: 16), ciphertext: "cea7403d4d606b6e074ec5d3baf39d18",
        tag: "d0d1c8a799996bf0265b98b5d48ab919", result: "valid", error: nil),
      AESGCMVector(
        id: 3, comment: "GCM spec test case 15: four blocks, no AAD", key: gcmKey, nonce: gcmNonce, aad: "",
        plaintext: gcmPlaintext, ciphertext: gcmCiphertext, tag: "b094dac5d93471bdec1a502270e3cc6c",
        result: "valid", error: nil),
      AESGCMVector(
        id: 4, comment: "GCM spec test case 16: 60 bytes with 20 bytes of AAD", key: gcmKey, nonce: gcmNonce,
        aad: "feedfacedeadbeeffeedfacedeadbeefabaddad2", plaintext: String(gcmPlaintext.prefix(120)),
        ciphertext: String(gcmCiphertext.prefix(120)), tag: "76fc6ece0f4e1768cddf8853bb2d551b",
        result: "valid", error: nil),
    ]
    var tampered = tests[3]
    tampered.id = 5
    tampered.comment = "test case 16 with the last tag bit flipped"
    tampered.tag = "76fc6ece0f4e1768cddf8853bb2d551a"
    tampered.result = "invalid"
    tampered.error = "authentication_failed"
    tests.append(tampered)
    var wrongAAD = tests[3]
    wrongAAD.id = 6
    wrongAAD.comment = "test case 16 with one AAD bit flipped"
    wrongAAD.aad = "feedfacedeadbeeffeedfacedeadbeefabaddad3"
    wrongAAD.result = "invalid"
    wrongAAD.error = "authentication_failed"
    tests.append(wrongAAD)
    var flippedCiphertext = tests[2]
    flippedCiphertext.id = 7
    flippedCiphertext.comment = "test case 15 with the first ciphertext bit flipped"
    flippedCiphertext.ciphertext = "d" + flippedCiphertext.ciphertext.dropFirst()
    flippedCiphertext.result = "invalid"
    flippedCiphertext.error = "authentication_failed"
    tests.append(flippedCiphertext)
    return AESGCMVectorFile(
      description: "AES-256-GCM known answers with 96-bit nonces and 128-bit tags; hex fields.",
      source: "McGrew and Viega, The Galois/Counter Mode of Operation (GCM), test cases 13-16; cases 5-7 derived",
      tests: tests)
  }
}

enum SealedValueVectors {
  static let keyA = NoteKey(id: KeyID(rawValue: 0x0a0b_0c0d), key: key(from: 0x00))
  static let keyB = NoteKey(id: KeyID(rawValue: 0xdead_beef), key: key(from: 0x20))

  static func key(from start: UInt8) -> SymmetricKey {
    let bytes = (0..<32).map { start &+ UInt8($0) }
    return try! bytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
  }

  static func nonce(_ label: String) -> [UInt8] {
    Array(SHA256.hash(data: Array("taskkey vector nonce \(label)".utf8)).bytes.prefix(12))
  }

  static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

  static func file() throws -> SealedValueVectorFile {
    var tests = [SealedValueVector]()
    func add(
      _ comment: String, context: String, value: String, result: String, openAs: String = "bytes",
      plaintext: [UInt8]? = nil, nonce: [UInt8]? = nil, error: String? = nil
    ) {
      tests.append(
        SealedValueVector(
          id: tests.count + 1, comment: comment, context: context, value: value, result: result, openAs: openAs,
          plaintext: plaintext.map(hex), nonce: nonce.map(hex), error: error))
    }
    func seal(_ plaintext: [UInt8], _ key: NoteKey, _ context: String, _ label: String) throws -> (String, [UInt8]) {
      let nonce = nonce(label)
      return (try SealedValue.seal(bytes: plaintext, using: key, context: context, nonce: nonce), nonce)
    }
    func valid(_ comment: String, _ plaintext: [UInt8], _ key: NoteKey, _ context: String, openAs: String = "text")
      throws -> String
    {
      let (value, nonce) = try seal(plaintext, key, context, "\(tests.count + 1)")
      add(comment, context: context, value: value, result: "valid", openAs: openAs, plaintext: plaintext, nonce: nonce)
      return value
    }

    // Valid values.
    let empty = try valid("empty plaintext, empty context", [], keyA, "")
    let milk = try valid("short note body", Array("buy milk".utf8), keyA, "note/42/body")
    _ = try valid("non-ASCII text and a non-ASCII context", Array("Grüße 🌍, ça va?".utf8), keyA, "note/ü/title")
    _ = try valid("a plaintext that is itself a sealed value opens once", Array(milk.utf8), keyA, "note/42/body")
    let long = try valid(
      "300 bytes over several lines, second key",
      Array(String(repeating: "line of text\n", count: 23).prefix(300).utf8),
      keyB, "page/9/body")
    _ = try valid("every byte value, opened as bytes", (0...255).map { UInt8($0) }, keyA, "", openAs: "bytes")

    // Plain values: no marker, returned unchanged.
    for (comment, value) in [
      ("ordinary text", "buy milk"),
      ("looks like a later version but has no kid", "tc2. call Bob"),
      ("upper-case marker", "TC1.0A0B0C0D:AAAA"),
      ("upper-case kid", "tc1.0A0B0C0D:AAAA"),
      ("version with a leading zero", "tc01.0a0b0c0d:AAAA"),
      ("no colon after the kid", "tc1.0a0b0c0d"),
      ("seven-digit kid", "tc1.0a0b0c0:AAAA"),
      ("leading space before the marker", " tc1.0a0b0c0d:AAAA"),
      ("empty string", ""),
    ] {
      add(comment, context: "", value: value, result: "plain")
    }

    // Invalid values, each with the one error it must give.
    let milkSealed = try #require(try SealedValue.parse(milk))
    func withPayload(_ bytes: [UInt8], kid: KeyID = keyA.id) -> String {
      SealedValue.marker(for: kid) + Base64.encode(bytes)
    }
    var bytes = milkSealed.box.combined
    bytes[bytes.count - 1] ^= 0x01
    add(
      "last tag bit flipped", context: "note/42/body", value: withPayload(bytes), result: "invalid",
      error: "authentication_failed")
    bytes = milkSealed.box.combined
    bytes[12] ^= 0x80
    add(
      "first ciphertext bit flipped", context: "note/42/body", value: withPayload(bytes), result: "invalid",
      error: "authentication_failed")
    bytes = milkSealed.box.combined
    bytes[0] ^= 0x01
    add(
      "nonce bit flipped", context: "note/42/body", value: withPayload(bytes), result: "invalid",
      error: "authentication_failed")
    add(
      "kid changed to another key in the keyring", context: "note/42/body",
      value: withPayload(milkSealed.box.combined, kid: keyB.id), result: "invalid", error: "authentication_failed")
    add(
      "kid not in the keyring", context: "note/42/body",
      value: withPayload(milkSealed.box.combined, kid: KeyID(rawValue: 0xffff_ffff)), result: "invalid",
      error: "unknown_key_id")
    add(
      "opened under another record's context", context: "note/43/body", value: milk, result: "invalid",
      error: "authentication_failed")
    add("opened with an empty context", context: "", value: milk, result: "invalid", error: "authentication_failed")
    add(
      "payload of 27 bytes", context: "", value: withPayload(Array(milkSealed.box.combined.prefix(27))),
      result: "invalid", error: "truncated")
    add("empty payload", context: "", value: "tc1.0a0b0c0d:", result: "invalid", error: "truncated")
    let longSealed = try #require(try SealedValue.parse(long))
    add(
      "tag removed from a long value", context: "page/9/body",
      value: withPayload(Array(longSealed.box.combined.dropLast(16)), kid: keyB.id), result: "invalid",
      error: "authentication_failed")
    // `empty` has a 28-byte payload: 40 base64 characters ending in "==".
    var chars = Array(empty.utf8)
    let lastIndex = chars.count - 3
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    chars[lastIndex] = alphabet[alphabet.firstIndex(of: chars[lastIndex])! + 1]
    add(
      "non-zero trailing bits before the padding (non-canonical)", context: "",
      value: String(decoding: chars, as: UTF8.self), result: "invalid", error: "invalid_base64")
    add("padding removed", context: "", value: String(empty.dropLast(2)), result: "invalid", error: "invalid_base64")
    add("extra padding", context: "", value: empty + "====", result: "invalid", error: "invalid_base64")
    add("trailing newline", context: "note/42/body", value: milk + "\n", result: "invalid", error: "invalid_base64")
    let urlSafe = "tc1.0a0b0c0d:" + String(repeating: "-_", count: 20)
    add("URL-safe alphabet", context: "", value: urlSafe, result: "invalid", error: "invalid_base64")
    let spaced = String(milk.prefix(20)) + " " + String(milk.dropFirst(20))
    add("space inside the payload", context: "note/42/body", value: spaced, result: "invalid", error: "invalid_base64")
    add("version 2", context: "", value: "tc2." + milk.dropFirst(4), result: "invalid", error: "unsupported_version")
    add("version 10", context: "", value: "tc10." + milk.dropFirst(4), result: "invalid", error: "unsupported_version")
    add(
      "version larger than 64 bits", context: "", value: "tc99999999999999999999." + milk.dropFirst(4),
      result: "invalid", error: "unsupported_version")
    let (notText, notTextNonce) = try seal([0xff, 0xfe, 0x41], keyA, "", "not-utf8")
    add(
      "plaintext is not UTF-8, opened as text", context: "", value: notText, result: "invalid", openAs: "text",
      nonce: notTextNonce, error: "invalid_utf8")

    return SealedValueVectorFile(
      description: "Sealed values, format v1 (SECURITY.md, 'Sealed value v1'). Open each 'value' with the keyring "
        + "'keys' and the case's 'context'.",
      keys: [keyA, keyB].map { noteKey in
        VectorKey(kid: noteKey.id.hex, key: noteKey.key.withUnsafeBytes { Hex.encode($0) })
      },
      tests: tests)
  }
}

enum Argon2idVectors {
  static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

  static func file() throws -> Argon2idVectorFile {
    var tests = [
      Argon2idVector(
        id: 1, comment: "RFC 9106 section 5.3, Argon2id test vector", password: String(repeating: "01", count: 32),
        salt: String(repeating: "02", count: 16), secret: String(repeating: "03", count: 8),
        ad: String(repeating: "04", count: 12), t: 3, m: 32, p: 4, length: 32, result: "valid",
        tag: "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659", error: nil)
    ]
    let salt = Array(0..<16).map { UInt8($0) }
    func derived(_ comment: String, _ password: [UInt8], t: UInt32, m: UInt32, length: Int) throws {
      let secret = try password.withUnsafeBytes { try SecureBytes(copying: $0) }
      let tag = try PasswordKDF.deriveBytes(
        from: secret, salt: salt, parameters: PasswordKDF.Parameters(opsLimit: t, memoryKiB: m), byteCount: length)
      tests.append(
        Argon2idVector(
          id: tests.count + 1, comment: comment, password: hex(password), salt: hex(salt), secret: "", ad: "", t: t,
          m: m, p: 1, length: length, result: "valid", tag: tag.withUnsafeBytes { Hex.encode($0) }, error: nil))
    }
    func refused(_ comment: String, password: [UInt8], salt: [UInt8], t: UInt32, m: UInt32, length: Int) {
      tests.append(
        Argon2idVector(
          id: tests.count + 1, comment: comment, password: hex(password), salt: hex(salt), secret: "", ad: "", t: t,
          m: m, p: 1, length: length, result: "invalid", tag: nil, error: "invalid_kdf_parameters"))
    }
    let staple = Array("correct horse battery staple".utf8)
    try derived("the vault's fast test preset (t=1, m=8 MiB), 32-byte KEK", staple, t: 1, m: 8192, length: 32)
    try derived("fast test preset, 64 bytes as a sync bundle derives", staple, t: 1, m: 8192, length: 64)
    try derived("the calibration floor (t=3, m=64 MiB)", staple, t: 3, m: 65536, length: 32)
    try derived("non-ASCII passphrase as UTF-8", Array("pässwörd 🔑".utf8), t: 2, m: 1024, length: 32)
    try derived("the least memory accepted (8 KiB)", staple, t: 1, m: 8, length: 16)
    refused("no passes", password: staple, salt: salt, t: 0, m: 8192, length: 32)
    refused("more than 64 passes", password: staple, salt: salt, t: 65, m: 8192, length: 32)
    refused("memory above 4 GiB", password: staple, salt: salt, t: 1, m: (4 << 20) + 1, length: 32)
    refused("memory below 8 KiB", password: staple, salt: salt, t: 1, m: 7, length: 32)
    refused("a 15-byte salt", password: staple, salt: Array(salt.prefix(15)), t: 1, m: 8192, length: 32)
    refused("an empty passphrase", password: [], salt: salt, t: 1, m: 8192, length: 32)
    refused("a 15-byte output", password: staple, salt: salt, t: 1, m: 8192, length: 15)
    refused(
      "a 1025-byte passphrase", password: [UInt8](repeating: 0x61, count: 1025), salt: salt, t: 1, m: 8192, length: 32)
    return Argon2idVectorFile(
      description: "Argon2id v1.3 as TaskKey derives its vault and bundle keys (SECURITY.md §8.6): libsodium "
        + "crypto_pwhash, one lane, no secret, no associated data. Case 1 is RFC 9106's vector, a fact that "
        + "needs four lanes, a secret and associated data.",
      tests: tests)
  }
}
