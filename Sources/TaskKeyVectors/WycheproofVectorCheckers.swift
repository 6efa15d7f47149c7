import CommandKit
import FoundationEssentials
import TaskCrypto

/// Project Wycheproof's AES-GCM file (`Vectors/wycheproof/aes_gcm_test.json`,
/// an unmodified copy). Runs every `AeadTest` group with 256-bit keys,
/// 96-bit IVs and 128-bit tags, the only parameters TaskKey seals with, and
/// names every other group as skipped with its test count.
enum WycheproofAEADVectorChecker: WycheproofChecker {
  static let formats = ["wycheproof AES-GCM"]
  static let algorithm = "AES-GCM"
  static let schema = "aead_test_schema"

  static func runs(_ group: WycheproofAEADGroup) -> Bool {
    group.type == "AeadTest" && group.keySize == 256 && group.ivSize == 96 && group.tagSize == 128
  }

  /// `valid` must open to `msg`; `invalid` must fail with
  /// `authentication_failed`; `acceptable` may do either, but if it opens it
  /// must give `msg` (Vectors/README.md).
  static func check(_ test: WycheproofAEADTest) -> String? {
    let vector = AESGCMVector(
      id: test.tcId, comment: test.comment.isEmpty ? test.flags.joined(separator: ",") : test.comment,
      key: test.key, nonce: test.iv, aad: test.aad, plaintext: test.msg, ciphertext: test.ct, tag: test.tag,
      result: test.result == "invalid" ? "invalid" : "valid", error: "authentication_failed")
    let failure = AESGCMVectorChecker.check(vector)
    // An acceptable case may be refused; it must never open to other bytes.
    if test.result == "acceptable", let line = failure, line.firstRange(of: "opened to different bytes") == nil {
      return nil
    }
    return failure.map { "tcId \($0)" }
  }
}

/// Project Wycheproof's HMAC-SHA256 file
/// (`Vectors/wycheproof/hmac_sha256_test.json`, an unmodified copy): the MAC
/// of the assistant registry, the last-used file and backups, and the
/// derivation of DWK and BK. Runs the `MacTest` groups with 256-bit keys and
/// full 256-bit tags, which is how TaskKey uses HMAC-SHA256 (its keys are
/// 256-bit `SymmetricKey`s and it never truncates a tag), and names every
/// other group as skipped.
enum WycheproofMACVectorChecker: WycheproofChecker {
  static let formats = ["wycheproof HMAC-SHA256"]
  static let algorithm = "HMACSHA256"
  static let schema = "mac_test_schema"

  static func runs(_ group: WycheproofMACGroup) -> Bool {
    group.type == "MacTest" && group.keySize == 256 && group.tagSize == 256
  }

  /// `valid`: the computed tag equals `tag` and verifies; `invalid`: `tag`
  /// must not verify; `acceptable`: either.
  static func check(_ test: WycheproofMACTest) -> String? {
    let name = test.name
    guard let keyBytes = VectorVerdict.hex(test.key), let message = VectorVerdict.hex(test.msg),
      let tag = VectorVerdict.hex(test.tag)
    else { return "\(name): a field is not hex" }
    let key: SymmetricKey
    do {
      key = try keyBytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
    } catch {
      return "\(name): \(error)"
    }
    let computed = HMACSHA256.authenticationCode(for: message, using: key)
    let verifies = HMACSHA256.isValidAuthenticationCode(tag, authenticating: message, using: key)
    switch test.result {
    case "valid":
      return computed == tag && verifies ? nil : "\(name): expected the tag to verify, but it did not"
    case "invalid":
      return verifies ? "\(name): expected the tag to be refused, but it verified" : nil
    case "acceptable":
      return verifies == (computed == tag) ? nil : "\(name): verification disagrees with the computed tag"
    default:
      return "\(name): unknown result '\(test.result)'"
    }
  }
}

/// A Wycheproof AEAD test group.
struct WycheproofAEADGroup: WycheproofGroup {
  var ivSize: Int
  var keySize: Int
  var tagSize: Int
  var type: String
  var tests: [WycheproofAEADTest]
  var parameters: String { "keySize=\(keySize) ivSize=\(ivSize) tagSize=\(tagSize) " }
}

/// A Wycheproof AEAD test; hex fields.
struct WycheproofAEADTest: WycheproofCase {
  var tcId: Int
  var comment: String
  var key: String
  var iv: String
  var aad: String
  var msg: String
  var ct: String
  var tag: String
  /// `valid`, `invalid` or `acceptable`.
  var result: String
  var flags: [String]
}

/// A Wycheproof MAC test group; sizes in bits.
struct WycheproofMACGroup: WycheproofGroup {
  var keySize: Int
  var tagSize: Int
  var type: String
  var tests: [WycheproofMACTest]
  var parameters: String { "keySize=\(keySize) tagSize=\(tagSize) " }
}

/// A Wycheproof MAC test; hex fields.
struct WycheproofMACTest: WycheproofCase {
  var tcId: Int
  var comment: String
  var key: String
  var msg: String
  var tag: String
  /// `valid`, `invalid` or `acceptable`.
  var result: String
  var flags: [String]
}

/// Project Wycheproof's HKDF-SHA-512 file
/// (`Vectors/wycheproof/hkdf_sha512_test.json`, an unmodified copy): the
/// Expand step that derives each attachment's keys. Every case runs Extract
/// then Expand (`HKDFSHA512.deriveBytes`); every group runs, since Extract
/// takes input keys of any length.
enum WycheproofHKDFVectorChecker: WycheproofChecker {
  static let formats = ["wycheproof HKDF-SHA-512"]
  static let algorithm = "HKDF-SHA-512"
  static let schema = "hkdf_test_schema"

  static func runs(_ group: WycheproofHKDFGroup) -> Bool { group.type == "HkdfTest" }

  /// `valid`: the output equals `okm`; `invalid`: the derivation must be
  /// refused (an output longer than 255 × 64 bytes, as `too_large`);
  /// `acceptable`: either, but an output must equal `okm`.
  static func check(_ test: WycheproofHKDFTest) -> String? {
    let name = test.name
    guard let ikm = VectorVerdict.hex(test.ikm), let salt = VectorVerdict.hex(test.salt),
      let info = VectorVerdict.hex(test.info), let okm = VectorVerdict.hex(test.okm)
    else { return "\(name): a field is not hex" }
    let outcome = Result {
      try HKDFSHA512.deriveBytes(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: test.size)
        .withUnsafeBytes { Array($0) }
    }
    let result = test.result == "acceptable" ? (try? outcome.get()).map { _ in "valid" } ?? "invalid" : test.result
    return VectorVerdict.verdict(
      name, result: result, expectedError: "too_large", outcome: outcome,
      check: { $0 == okm ? nil : "derived other bytes" })
  }
}

/// A Wycheproof HKDF test group; `keySize` is the IKM size in bits.
struct WycheproofHKDFGroup: WycheproofGroup {
  var keySize: Int
  var type: String
  var tests: [WycheproofHKDFTest]
  var parameters: String { "" }
}

/// A Wycheproof HKDF test; hex fields, `size` in bytes.
struct WycheproofHKDFTest: WycheproofCase {
  var tcId: Int
  var comment: String
  var ikm: String
  var salt: String
  var info: String
  var size: Int
  var okm: String
  /// `valid`, `invalid` or `acceptable`.
  var result: String
  var flags: [String]
}

/// A Wycheproof test file: the algorithm and its groups (the group and test
/// schemas differ per file type).
struct WycheproofFile<Group: WycheproofGroup>: Codable {
  var algorithm: String
  var testGroups: [Group]
}

/// A Wycheproof test group: its type, the parameters a skip line names, and
/// its cases.
protocol WycheproofGroup: Codable {
  associatedtype Case: WycheproofCase
  /// The group type, e.g. `AeadTest`.
  var type: String { get }
  /// The group's sizes as a skip line names them (`keySize=… ` with a
  /// trailing space), or empty.
  var parameters: String { get }
  /// The group's cases.
  var tests: [Case] { get }
}

/// A Wycheproof test case: the fields every file type shares.
protocol WycheproofCase: Codable {
  var tcId: Int { get }
  var comment: String { get }
  /// `valid`, `invalid` or `acceptable`.
  var result: String { get }
  var flags: [String] { get }
}

extension WycheproofCase {
  /// How a failure line names the case: its id, and its comment or else its flags.
  var name: String { "tcId \(tcId) (\(comment.isEmpty ? flags.joined(separator: ",") : comment))" }
}

/// A checker of one Project Wycheproof file type: the file is recognised by
/// its algorithm and schema, every group this build runs is checked case by
/// case, and every other group is named as skipped with its case count.
protocol WycheproofChecker: VectorChecker {
  associatedtype Group: WycheproofGroup
  /// The file's `algorithm`.
  static var algorithm: String { get }
  /// The schema name without `.json` (`_v1` is accepted too).
  static var schema: String { get }
  /// Whether this build runs the group (TaskKey's parameters), else it is skipped.
  static func runs(_ group: Group) -> Bool
  /// One case's verdict: nil when it passed, else one failure line.
  static func check(_ test: Group.Case) -> String?
}

extension WycheproofChecker {
  static func accepts(_ header: VectorFileHeader) -> Bool {
    header.format == nil && header.algorithm == algorithm
      && (header.schema == "\(schema).json" || header.schema == "\(schema)_v1.json")
  }

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    let file = try JSONDecoder().decode(WycheproofFile<Group>.self, from: data)
    for group in file.testGroups {
      guard runs(group) else {
        report.skip(
          "group \(group.type) \(group.parameters)(\(group.tests.count) tests)", count: group.tests.count)
        continue
      }
      for test in group.tests { report.record(check(test)) }
    }
  }
}
