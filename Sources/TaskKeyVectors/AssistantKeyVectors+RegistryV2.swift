import AssistantKeys
import FoundationEssentials
import TaskCrypto

extension AssistantKeyVectors {
  /// `assistant-registry`, version 2 (`Vectors/assistant-registry-v2.json`):
  /// registries in hex, each case with its verify outcome and the outcome
  /// of a full read (`list`).
  struct RegistryFileV2: Codable, Equatable {
    static let version = 2

    struct Test: Codable, Equatable {
      var id: Int
      var comment: String
      /// The key presented.
      var key: String
      /// A registry file (hex) that replaces the file-level one for this case.
      var registry: String?
      /// The generation the vault remembers, when it remembers one.
      var anchor: UInt64?
      /// `valid` or `invalid`: the verify outcome.
      var result: String
      /// Valid: the identity returned.
      var publicID: String?
      var name: String?
      var trust: String?
      var grants: [String]?
      /// Valid: when the key stops verifying, Unix seconds, if it does.
      var expires: Int64?
      /// Invalid: `unknown_key`, `revoked`, `expired` or `registry_damaged`.
      var error: String?
      /// `registry_damaged`: `authentication_failed`, `malformed`,
      /// `unsupported_version`, `too_large` or `rolled_back`.
      var damage: String?
      /// The full read's outcome (`list`, every write): `valid` or the
      /// damage that refuses the file.
      var list: String

      enum CodingKeys: String, CodingKey {
        case id, comment, key, registry, anchor, result, name, trust, grants, expires, error, damage, list
        case publicID = "public_id"
      }
    }

    var format: String
    var version: Int
    var description: String
    var integrityKey: String
    var now: Int64
    /// The authentic registry file, hex.
    var registry: String
    var tests: [Test]

    enum CodingKeys: String, CodingKey {
      case format, version, description, now, registry, tests
      case integrityKey = "integrity_key"
    }
  }

  /// The verify outcome for `key` presented to `registry` (either
  /// version) at `now` with the vault remembering `anchor`, and the full
  /// read's outcome: (`result`, `error`, `damage`, identity, `list`).
  static func registryV2Outcome(
    key: String, registry: [UInt8], anchor: UInt64?, integrityKey: SymmetricKey, now: Int64
  ) -> (String, String?, String?, AssistantIdentity?, String) {
    let list: String
    do {
      try AssistantKeyReaders.readWhole(registry: registry, integrityKey: integrityKey, floor: anchor ?? 0)
      list = "valid"
    } catch AssistantKeyError.registryDamaged(let damage) {
      list = damageName(damage)
    } catch {
      list = "unexpected: \(error)"
    }
    do {
      let digest = try Array(key.utf8).withUnsafeBytes { try AssistantKey.check($0) }
      guard
        let identity = try AssistantKeyReaders.verify(
          digest, registry: registry, integrityKey: integrityKey, floor: anchor ?? 0, now: now)
      else { return ("invalid", "unknown_key", nil, nil, list) }
      return ("valid", nil, nil, identity, list)
    } catch {
      let (result, name, damage) = verifyFailure(error)
      return (result, name, damage, nil, list)
    }
  }

  static func check(_ file: RegistryFileV2) throws -> [String] {
    guard let integrityKey = try integrityKey(file.integrityKey) else {
      return ["'integrity_key' is not 32 bytes of hex"]
    }
    return file.tests.compactMap { test in
      guard let registry = Hex.decode(test.registry ?? file.registry) else {
        return "case \(test.id) (\(test.comment)): 'registry' is not hex"
      }
      let (result, error, damage, identity, list) = registryV2Outcome(
        key: test.key, registry: registry, anchor: test.anchor, integrityKey: integrityKey, now: file.now)
      let expires = identity?.expires.map { Int64($0.timeIntervalSince1970) }
      guard result == test.result, error == test.error, damage == test.damage, identity?.id.text == test.publicID,
        identity?.name == test.name, identity?.trust.rawValue == test.trust, identity?.grants == test.grants,
        expires == test.expires, list == test.list
      else {
        return "case \(test.id) (\(test.comment)): got \(result) \(error ?? "") \(damage ?? "") list \(list)"
      }
      return nil
    }
  }
}
