import AssistantKeys
import FoundationEssentials
import TaskCrypto

/// Checks the assistant-key vector files (`Vectors/assistant-key-v1.json`,
/// `Vectors/assistant-registry-v1.json`, `Vectors/assistant-registry-v2.json`
/// and `Vectors/assistant-last-used-v1.json`) against this build, for
/// `taskkey vectors check` and for auditors. The schemas are in
/// `Vectors/README.md`.
///
/// Valid key vectors are recomputed from their fixed random bytes with the
/// same encoder that mints keys; registry vectors are decided with the same
/// parser and decision code that `AssistantKeyRegistry.verify` uses, on the
/// bytes in the file, without touching the disk.
public enum AssistantKeyVectors {
  /// The formats this checker reads (each at version 1; the registry at
  /// versions 1 and 2).
  public static let formats = [KeyFile.format, RegistryFile.format, LastUsedFile.format]

  /// The outcome of checking one vector file.
  public struct Report: Equatable, Sendable {
    /// The file's `format`.
    public var format: String
    /// How many cases ran.
    public var cases: Int
    /// One line per case that did not give its stated outcome, or per
    /// file-level defect; empty when the file passed.
    public var failures: [String]
  }

  /// Checks one vector file.
  ///
  /// - Parameter data: the file's bytes (JSON).
  /// - Returns: the report, or nil when the file's `format` is not one of
  ///   `formats`, so that a caller can try another checker.
  public static func check(_ data: Data) -> Report? {
    struct Header: Decodable {
      var format: String?
      var version: Int?
    }
    guard let header = try? JSONDecoder().decode(Header.self, from: data), let format = header.format,
      formats.contains(format)
    else { return nil }
    var report = Report(format: format, cases: 0, failures: [])
    if format == LastUsedFile.format, header.version == LastUsedFileV2.version {
      do {
        let file = try JSONDecoder().decode(LastUsedFileV2.self, from: data)
        report.cases = file.tests.count
        report.failures = try check(file)
      } catch {
        report.failures.append("malformed vector file: \(error)")
      }
      return report
    }
    if format == RegistryFile.format, header.version == RegistryFileV2.version {
      do {
        let file = try JSONDecoder().decode(RegistryFileV2.self, from: data)
        report.cases = file.tests.count
        report.failures = try check(file)
      } catch {
        report.failures.append("malformed vector file: \(error)")
      }
      return report
    }
    guard header.version == 1 else {
      report.failures.append("unknown version \(header.version.map(String.init) ?? "none") of format '\(format)'")
      return report
    }
    do {
      if format == KeyFile.format {
        let file = try JSONDecoder().decode(KeyFile.self, from: data)
        report.cases = file.tests.count
        report.failures = file.tests.compactMap(check)
      } else if format == LastUsedFile.format {
        let file = try JSONDecoder().decode(LastUsedFile.self, from: data)
        report.cases = file.tests.count
        report.failures = try check(file)
      } else {
        let file = try JSONDecoder().decode(RegistryFile.self, from: data)
        report.cases = file.tests.count
        report.failures = try check(file)
      }
    } catch {
      report.failures.append("malformed vector file: \(error)")
    }
    return report
  }

  // MARK: - Schemas (internal: the generator in the tests shares them)

  /// `assistant-key`, version 1.
  struct KeyFile: Codable, Equatable {
    static let format = "assistant-key"

    struct Test: Codable, Equatable {
      var id: Int
      var comment: String
      /// The presented string; its UTF-8 bytes are checked, nothing trimmed.
      var key: String
      /// `valid` or `invalid`.
      var result: String
      /// Valid: the 32 random bytes, hex.
      var random: String?
      /// Valid: CRC-32 of the first 46 bytes, 8 hex digits, big-endian.
      var crc32: String?
      /// Valid: the last 6 characters of `key`.
      var checksum: String?
      /// Valid: SHA-256 of the key string, hex.
      var sha256: String?
      /// Valid: the public id.
      var publicID: String?
      /// Invalid: `malformed_key` or `bad_checksum`.
      var error: String?
      /// `malformed_key`: `wrong_length`, `missing_prefix`, `invalid_character`, `body_out_of_range`.
      var reason: String?
      /// `wrong_length`: the length; `invalid_character`: the offset.
      var detail: Int?

      enum CodingKeys: String, CodingKey {
        case id, comment, key, result, random, crc32, checksum, sha256, error, reason, detail
        case publicID = "public_id"
      }
    }

    var format: String
    var version: Int
    var description: String
    var scannerRegex: String
    var tests: [Test]

    enum CodingKeys: String, CodingKey {
      case format, version, description, tests
      case scannerRegex = "scanner_regex"
    }
  }

  /// `assistant-registry`, version 1.
  struct RegistryFile: Codable, Equatable {
    static let format = "assistant-registry"

    struct Test: Codable, Equatable {
      var id: Int
      var comment: String
      /// The key presented.
      var key: String
      /// A registry file that replaces the file-level `registry` for this case.
      var registry: String?
      /// `valid` or `invalid`.
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
      /// `unsupported_version` or `too_large`.
      var damage: String?

      enum CodingKeys: String, CodingKey {
        case id, comment, key, registry, result, name, trust, grants, expires, error, damage
        case publicID = "public_id"
      }
    }

    var format: String
    var version: Int
    var description: String
    var integrityKey: String
    var now: Int64
    var registry: String
    var tests: [Test]

    enum CodingKeys: String, CodingKey {
      case format, version, description, now, registry, tests
      case integrityKey = "integrity_key"
    }
  }

  /// `assistant-last-used`, version 1.
  struct LastUsedFile: Codable, Equatable {
    static let format = "assistant-last-used"

    struct Test: Codable, Equatable {
      var id: Int
      var comment: String
      /// The last-used file, byte for byte (ASCII).
      var file: String
      /// `valid` (read as `lastUsed`) or `invalid` (refused with `damage`;
      /// every key then shows as never used).
      var result: String
      /// Valid: the table read, public id to Unix seconds.
      var lastUsed: [String: Int64]?
      /// Invalid: `authentication_failed`, `malformed`, `unsupported_version`
      /// or `too_large`.
      var damage: String?

      enum CodingKeys: String, CodingKey {
        case id, comment, file, result, damage
        case lastUsed = "last_used"
      }
    }

    var format: String
    var version: Int
    var description: String
    var integrityKey: String
    var tests: [Test]

    enum CodingKeys: String, CodingKey {
      case format, version, description, tests
      case integrityKey = "integrity_key"
    }
  }

  // MARK: - Deciding one case

  /// Reads a last-used file of the version-1 vectors as `list` does: a
  /// file that starts with the version-2 line is read as version 2
  /// (docs/formats/last-used.md): (`result`, `damage`, the table).
  static func lastUsedOutcome(_ text: String, integrityKey: SymmetricKey) -> (String, String?, [String: Int64]?) {
    lastUsedOutcome(Array(text.utf8), integrityKey: integrityKey)
  }

  /// The outcome names of reading a last-used file with `read`:
  /// (`result`, `damage`, the table by public id).
  static func lastUsedOutcome(reading read: () throws -> [AssistantKeyID: Int64]) -> (
    String, String?, [String: Int64]?
  ) {
    do {
      let table = try read()
      return ("valid", nil, Dictionary(uniqueKeysWithValues: table.map { ($0.key.text, $0.value) }))
    } catch AssistantKeyError.registryDamaged(let damage) {
      return ("invalid", damageName(damage), nil)
    } catch {
      return ("invalid", "unexpected: \(error)", nil)
    }
  }

  /// The outcome name of a registry or last-used rejection.
  static func damageName(_ damage: AssistantKeyError.RegistryDamage) -> String {
    switch damage {
    case .authenticationFailed: return "authentication_failed"
    case .malformed: return "malformed"
    case .unsupportedVersion: return "unsupported_version"
    case .tooLarge: return "too_large"
    case .unreadable: return "unreadable"
    case .integrityKeyUnavailable: return "integrity_key_unavailable"
    case .rolledBack: return "rolled_back"
    }
  }

  /// The outcome names of a key-string check: (`result`, `error`, `reason`, `detail`).
  static func keyOutcome(_ text: String) -> (String, String?, String?, Int?) {
    do {
      _ = try Array(text.utf8).withUnsafeBytes { try AssistantKey.check($0) }
      return ("valid", nil, nil, nil)
    } catch let error as AssistantKeyError {
      switch error {
      case .badChecksum: return ("invalid", "bad_checksum", nil, nil)
      case .malformedKey(.wrongLength(let length)): return ("invalid", "malformed_key", "wrong_length", length)
      case .malformedKey(.missingPrefix): return ("invalid", "malformed_key", "missing_prefix", nil)
      case .malformedKey(.invalidCharacter(let offset)):
        return ("invalid", "malformed_key", "invalid_character", offset)
      case .malformedKey(.bodyOutOfRange): return ("invalid", "malformed_key", "body_out_of_range", nil)
      default: return ("invalid", "unexpected: \(error)", nil, nil)
      }
    } catch {
      return ("invalid", "unexpected: \(error)", nil, nil)
    }
  }

  /// Presents `key` to `registry` at `now`: the verify decision without
  /// files, through the reader verify uses (a file that starts with the
  /// version-2 line is read as version 2, docs/formats/registry.md).
  static func registryOutcome(key: String, registry: String, integrityKey: SymmetricKey, now: Int64) -> (
    String, String?, String?, AssistantIdentity?
  ) {
    do {
      let digest = try Array(key.utf8).withUnsafeBytes { try AssistantKey.check($0) }
      guard
        let identity = try AssistantKeyReaders.verify(
          digest, registry: Array(registry.utf8), integrityKey: integrityKey, floor: 0, now: now)
      else {
        return ("invalid", "unknown_key", nil, nil)
      }
      return ("valid", nil, nil, identity)
    } catch {
      let (result, name, damage) = verifyFailure(error)
      return (result, name, damage, nil)
    }
  }

  /// The outcome names of a verify that threw `error`: (`result`,
  /// `error`, `damage`).
  static func verifyFailure(_ error: Error) -> (String, String?, String?) {
    switch error as? AssistantKeyError {
    case .revoked?: return ("invalid", "revoked", nil)
    case .expired?: return ("invalid", "expired", nil)
    case .registryDamaged(let damage)?: return ("invalid", "registry_damaged", damageName(damage))
    default: return ("invalid", "unexpected: \(error)", nil)
    }
  }

  private static func check(_ test: KeyFile.Test) -> String? {
    let (result, error, reason, detail) = keyOutcome(test.key)
    guard result == test.result, error == test.error, reason == test.reason, detail == test.detail else {
      return
        "case \(test.id) (\(test.comment)): got \(result) \(error ?? "") \(reason ?? "") \(detail.map(String.init) ?? "")"
    }
    guard result == "valid" else { return nil }
    guard let randomHex = test.random, let random = SHA256Digest(hex: randomHex)?.bytes,
      let key = try? random.withUnsafeBytes({ try AssistantKeyReaders.key(randomBytes: $0) })
    else { return "case \(test.id) (\(test.comment)): 'random' is not 32 bytes of hex" }
    let text = key.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    let crc = Array(text.utf8.prefix(46)).withUnsafeBytes { AssistantKeyReaders.crc32($0) }
    let crcHex = Hex.encode([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: crc >> $0) })
    let expected = [text, crcHex, String(text.suffix(6)), key.digest.hex, key.id.text]
    let stated = [test.key, test.crc32, test.checksum, test.sha256, test.publicID]
    guard expected == stated.map({ $0 ?? "" }) else {
      return "case \(test.id) (\(test.comment)): key, crc32, checksum, sha256 or public_id differ from this build's"
    }
    return nil
  }

  /// The file-level integrity key, or nil when it is not 32 bytes of hex.
  static func integrityKey(_ hex: String) throws -> SymmetricKey? {
    guard let bytes = SHA256Digest(hex: hex)?.bytes else { return nil }
    return try bytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
  }

  private static func check(_ file: LastUsedFile) throws -> [String] {
    guard let integrityKey = try integrityKey(file.integrityKey) else {
      return ["'integrity_key' is not 32 bytes of hex"]
    }
    return file.tests.compactMap { test in
      let (result, damage, table) = lastUsedOutcome(test.file, integrityKey: integrityKey)
      guard result == test.result, damage == test.damage, table == test.lastUsed else {
        return "case \(test.id) (\(test.comment)): got \(result) \(damage ?? "")"
      }
      return nil
    }
  }

  private static func check(_ file: RegistryFile) throws -> [String] {
    guard let integrityKey = try integrityKey(file.integrityKey) else {
      return ["'integrity_key' is not 32 bytes of hex"]
    }
    return file.tests.compactMap { test in
      let (result, error, damage, identity) = registryOutcome(
        key: test.key, registry: test.registry ?? file.registry, integrityKey: integrityKey, now: file.now)
      let expires = identity?.expires.map { Int64($0.timeIntervalSince1970) }
      guard result == test.result, error == test.error, damage == test.damage, identity?.id.text == test.publicID,
        identity?.name == test.name, identity?.trust.rawValue == test.trust, identity?.grants == test.grants,
        expires == test.expires
      else {
        return "case \(test.id) (\(test.comment)): got \(result) \(error ?? "") \(damage ?? "")"
      }
      return nil
    }
  }
}
