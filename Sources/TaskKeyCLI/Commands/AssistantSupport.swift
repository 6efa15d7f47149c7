import AssistantKeys
import Foundation
import TaskCrypto
import TaskVault

extension CLIError {
  /// The exit code of each assistant-key error: 20 to 24 for the key's own
  /// outcomes, 14 locked and 15 registry damaged (shared with the vault).
  static func exitCode(for error: AssistantKeyError) -> ExitCode {
    switch error {
    case .malformedKey: return .malformedAssistantKey
    case .badChecksum: return .assistantKeyChecksum
    case .unknownKey, .unknownID: return .unknownAssistantKey
    case .revoked: return .revokedAssistantKey
    case .expired: return .expiredAssistantKey
    case .vaultLocked: return .vaultLocked
    case .registryDamaged: return .tampered
    case .invalidName, .invalidGrant, .tooManyGrants, .invalidDuration, .nameInUse, .registryFull: return .dataError
    case .noSuchAssistant: return .noInput
    case .system(let system): return system.isRefusal ? .permission : .ioError
    case .idCollision: return .osError
    case .crypto(let crypto): return CLIError.crypto(crypto).exitCode
    case .vault(let vault): return exitCode(for: vault)
    case .notPermanent: return .ioError
    }
  }
}

/// Runs an assistant-key call, mapping its errors (and the vault's) into
/// the CLI's.
func assistantCall<T>(_ body: () throws -> T) throws -> T {
  do {
    return try body()
  } catch AssistantKeyError.vault(let error) {
    // The vault's own error keeps its message, hint and exit code.
    throw CLIError.vault(error)
  } catch let error as AssistantKeyError {
    throw CLIError.assistant(error)
  } catch let error as TaskVaultError {
    throw CLIError.vault(error)
  } catch let error as TaskCryptoError {
    throw CLIError.crypto(error)
  }
}

/// Opens the assistant-key registry of the vault at the default location;
/// the vault must be unlocked.
func openRegistry(_ streams: StandardStreams) throws -> AssistantKeyRegistry {
  let vault = try openVault(streams)
  return try assistantCall { try AssistantKeyRegistry(vault: vault) }
}

/// Parses `--expires D` / `--overlap D` with `parseDuration`.
func durationOption(_ arguments: inout Arguments, _ name: String) throws -> Duration? {
  guard let text = try arguments.option(name) else { return nil }
  guard let duration = parseDuration(text) else {
    throw arguments.usageError("\(name) takes a duration such as 90s, 15m, 8h or 30d (at most 365d)")
  }
  return duration
}

/// What `mint`, `rotate`, `verify` and `list --json` print about a key:
/// never the key itself.
struct KeyDescription: Encodable {
  let id: String
  let name: String
  let trust: String
  let grants: [String]
  let created: String?
  let expires: String?
  let status: String?
  let revoked: String?
  let overlapUntil: String?
  let lastUsed: String?

  enum CodingKeys: String, CodingKey {
    case id, name, trust, grants, created, expires, status, revoked
    case overlapUntil = "overlap_until"
    case lastUsed = "last_used"
  }

  init(_ record: AssistantKeyRecord) {
    id = record.id.text
    name = record.name
    trust = record.trust.rawValue
    grants = record.grants
    created = isoDate(record.created)
    expires = record.expires.map(isoDate)
    status = record.status.word
    switch record.status {
    case .revoked(let at): revoked = isoDate(at)
    default: revoked = nil
    }
    if case .overlapping(let until) = record.status { overlapUntil = isoDate(until) } else { overlapUntil = nil }
    lastUsed = record.lastUsed.map(isoDate)
  }

  init(_ identity: AssistantIdentity) {
    id = identity.id.text
    name = identity.name
    trust = identity.trust.rawValue
    grants = identity.grants
    expires = identity.expires.map(isoDate)
    created = nil
    status = nil
    revoked = nil
    overlapUntil = nil
    lastUsed = nil
  }

  func encode(to encoder: Encoder) throws {
    // Absent fields are written as null, so the shape is fixed per command.
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(id, forKey: .id)
    try container.encode(name, forKey: .name)
    try container.encode(trust, forKey: .trust)
    try container.encode(grants, forKey: .grants)
    try container.encode(expires, forKey: .expires)
    if let status {
      try container.encode(created, forKey: .created)
      try container.encode(status, forKey: .status)
      try container.encode(revoked, forKey: .revoked)
      try container.encode(overlapUntil, forKey: .overlapUntil)
      try container.encode(lastUsed, forKey: .lastUsed)
    }
  }
}

/// Writes a freshly minted key: alone on standard output (straight from
/// locked memory, never through a `String`), or inside one JSON object with
/// `--json`; with `note` on standard error otherwise.
func writeMinted(_ minted: MintedAssistantKey, json: Bool, note: String, _ streams: StandardStreams) throws {
  if json {
    // {"key":"tk_…", then the record's fields.
    let record = try jsonText(KeyDescription(minted.record))
    try writeAll(fd: 1, Array(#"{"key":""#.utf8), path: "<stdout>")
    try minted.key.withUnsafeBytes { try writeAll(fd: 1, $0, path: "<stdout>") }
    try writeAll(fd: 1, Array(("\"," + record.dropFirst() + "\n").utf8), path: "<stdout>")
  } else {
    try minted.key.withUnsafeBytes { try writeAll(fd: 1, $0, path: "<stdout>") }
    try writeAll(fd: 1, [UInt8(ascii: "\n")], path: "<stdout>")
    streams.printError(note)
  }
}

/// A one-line summary of a record for standard error.
func summary(_ record: AssistantKeyRecord) -> String {
  let grants = record.grants.isEmpty ? "no grants" : "grants " + record.grants.joined(separator: ",")
  let expires = record.expires.map { "expires \(isoDate($0))" } ?? "no expiry"
  return "\(record.id) for assistant '\(record.name)': trust \(record.trust.rawValue), \(grants), \(expires)"
}
