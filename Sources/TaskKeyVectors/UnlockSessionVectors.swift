import FoundationEssentials
import TaskCrypto
import TaskVault

/// Checks `Vectors/unlock-session-v2.json`: each case hands a session file
/// and session key files (as bytes, with the boot id and the clock) to the
/// reader every command uses (`UnlockSession.open`, the steps of
/// docs/formats/unlock-session.md), without files, and compares the
/// outcome with the case's. The schema is in `Vectors/README.md`.
public enum UnlockSessionVectors {
  /// The format this checker reads.
  public static let format = "unlock-session"
  /// The format version the vectors describe.
  public static let version = 2

  /// Checks one file.
  ///
  /// - Returns: how many cases ran and one line per failed case, or nil when
  ///   the file is not an `unlock-session` version 2 file.
  /// - Throws: a decoding error when the file does not follow the schema.
  public static func check(_ data: Data) throws -> (cases: Int, failures: [String])? {
    let file = try JSONDecoder().decode(File.self, from: data)
    guard file.format == format, file.version == version else { return nil }
    guard let header = Hex.decode(file.vaultHeader), header.count == VaultReaders.sessionHeaderByteCount else {
      return (file.tests.count, ["'vault_header' is not \(VaultReaders.sessionHeaderByteCount) bytes of hex"])
    }
    return (file.tests.count, file.tests.compactMap { check($0, header: header) })
  }

  static func check(_ test: Case, header: [UInt8]) -> String? {
    let label = "case \(test.id) (\(test.comment))"
    // nil: not hex; .some(nil): no such file.
    let decode: (String?) -> [UInt8]?? = { text in
      guard let text else { return .some(nil) }
      return Hex.decode(text).map { .some($0) }
    }
    guard let bootID = Hex.decode(test.bootID), bootID.count == 16, let session = decode(test.session),
      let keyFile = decode(test.keyFile), let keyFileNext = decode(test.keyFileNext)
    else { return "\(label): a field is not hex, or 'boot_id' is not 16 bytes" }
    let outcome = Result {
      try VaultReaders.openSession(
        session: session, keyFiles: [keyFile, keyFileNext], vaultHeader: header, bootID: bootID, now: test.now)
    }
    switch (outcome, test.result) {
    case (.success(let opened), "valid"):
      let master = opened.masterKey.withUnsafeBytes { Hex.encode(Array($0)) }
      let wrap = opened.deviceWrapKey.withUnsafeBytes { Hex.encode(Array($0)) }
      guard master == test.masterKey, wrap == test.deviceWrapKey, opened.notAfter == test.notAfter else {
        return "\(label): opened to other keys or another 'not_after'"
      }
      return nil
    case (.success, _): return "\(label): expected \(test.error ?? "?") \(test.reason ?? ""), but it opened"
    case (.failure(TaskVaultError.locked(let reason)), "invalid") where test.error == "locked":
      return name(of: reason) == test.reason
        ? nil : "\(label): locked because \(name(of: reason)), not \(test.reason ?? "?")"
    case (.failure(TaskVaultError.tampered), "invalid") where test.error == "tampered": return nil
    case (.failure(let error), _): return "\(label): got \(error)"
    }
  }

  /// The outcome name of a lock reason (SECURITY.md §10, `reason` of `locked`).
  public static func name(of reason: LockReason) -> String {
    switch reason {
    case .notUnlocked: "not_unlocked"
    case .machineRestarted: "machine_restarted"
    case .expired: "expired"
    case .sessionKeyGone: "session_key_gone"
    case .sessionKeyMismatch: "session_key_mismatch"
    case .sessionInconsistent: "session_inconsistent"
    }
  }

  /// The file.
  public struct File: Codable, Equatable {
    /// `unlock-session`.
    public var format: String
    /// 2, the session format's version.
    public var version: Int
    /// What the file is and how to run it.
    public var description: String
    /// The vault file's bytes 0..<121, hex: the vault id is bytes 10..<26,
    /// the header digest SHA-256 of all of them.
    public var vaultHeader: String
    /// The cases.
    public var tests: [Case]

    enum CodingKeys: String, CodingKey {
      case format, version, description, tests
      case vaultHeader = "vault_header"
    }
  }

  /// One case: the files a reader finds, the boot id and the clock.
  public struct Case: Codable, Equatable {
    /// Unique in the file.
    public var id: Int
    /// What the case tests.
    public var comment: String
    /// The kernel's current boot id, hex (16 bytes).
    public var bootID: String
    /// Now, in seconds since 1970.
    public var now: Int64
    /// The session file, hex; nil: there is none.
    public var session: String?
    /// The session key file, hex; nil: there is none.
    public var keyFile: String?
    /// The `.next` session key file, hex; nil: there is none.
    public var keyFileNext: String?
    /// `valid` (the keys below) or `invalid` (`error`, and `reason` for `locked`).
    public var result: String
    /// Invalid: `locked` or `tampered`.
    public var error: String?
    /// `locked`: which step refused, as `name(of:)` spells it.
    public var reason: String?
    /// Valid: MK_1, hex.
    public var masterKey: String?
    /// Valid: DWK, hex.
    public var deviceWrapKey: String?
    /// Valid: the session's time limit (0: none).
    public var notAfter: Int64?

    enum CodingKeys: String, CodingKey {
      case id, comment, now, session, result, error, reason
      case bootID = "boot_id"
      case keyFile = "key_file"
      case keyFileNext = "key_file_next"
      case masterKey = "master_key"
      case deviceWrapKey = "device_wrap_key"
      case notAfter = "not_after"
    }

    /// A case.
    public init(
      id: Int, comment: String, bootID: String, now: Int64, session: String?, keyFile: String?,
      keyFileNext: String?, result: String, error: String? = nil, reason: String? = nil, masterKey: String? = nil,
      deviceWrapKey: String? = nil, notAfter: Int64? = nil
    ) {
      (self.id, self.comment, self.bootID, self.now) = (id, comment, bootID, now)
      (self.session, self.keyFile, self.keyFileNext) = (session, keyFile, keyFileNext)
      (self.result, self.error, self.reason) = (result, error, reason)
      (self.masterKey, self.deviceWrapKey, self.notAfter) = (masterKey, deviceWrapKey, notAfter)
    }
  }
}
