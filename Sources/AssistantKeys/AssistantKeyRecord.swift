import FoundationEssentials

/// How far an assistant is trusted, from least to most. The registry
/// authenticates it, so it cannot be raised by editing the file.
public enum TrustLevel: String, CaseIterable, Comparable, Sendable {
  /// Read-only or sandboxed assistants.
  case restricted
  /// The default for an assistant acting for the user.
  case standard
  /// An assistant allowed to act with the user's full authority.
  case elevated

  private var rank: Int {
    switch self {
    case .restricted: return 0
    case .standard: return 1
    case .elevated: return 2
    }
  }

  /// Orders levels from `restricted` to `elevated`.
  public static func < (lhs: TrustLevel, rhs: TrustLevel) -> Bool { lhs.rank < rhs.rank }
}

/// Who a verified key belongs to and what it may do: the answer of
/// `AssistantKeyRegistry.verify`.
public struct AssistantIdentity: Equatable, Sendable {
  /// The key's public id.
  public let id: AssistantKeyID
  /// The assistant's name.
  public let name: String
  /// The trust level.
  public let trust: TrustLevel
  /// The capability grants, sorted and without duplicates.
  public let grants: [String]
  /// When the key stops verifying, if it expires; also the end of a
  /// rotation overlap window when that comes first.
  public let expires: Date?
}

/// The state of a key at the time a list was made.
public enum AssistantKeyStatus: Equatable, Sendable {
  /// The key verifies.
  case active
  /// The key verifies until `until`, when it is revoked by itself (the old
  /// key of a rotation with an overlap window).
  case overlapping(until: Date)
  /// The key was revoked at `at`; permanent.
  case revoked(at: Date)
  /// The key expired at `at`.
  case expired(at: Date)

  /// A short word for listings: `active`, `overlapping`, `revoked`, `expired`.
  public var word: String {
    switch self {
    case .active: return "active"
    case .overlapping: return "overlapping"
    case .revoked: return "revoked"
    case .expired: return "expired"
    }
  }
}

/// Everything the registry knows about one key, except the digest: what
/// `AssistantKeyRegistry.keys()` lists. Never contains the key.
public struct AssistantKeyRecord: Equatable, Sendable {
  /// The key's public id.
  public let id: AssistantKeyID
  /// The assistant's name.
  public let name: String
  /// The trust level.
  public let trust: TrustLevel
  /// The capability grants, sorted and without duplicates.
  public let grants: [String]
  /// When the key was minted, to the second.
  public let created: Date
  /// When the key expires, if it does.
  public let expires: Date?
  /// Its state when the record was made.
  public let status: AssistantKeyStatus
  /// The last successful verify, to within `AssistantKeyRegistry.lastUsedResolution`;
  /// nil when never used or when the advisory last-used file is missing or
  /// fails its integrity check.
  public let lastUsed: Date?
}

/// A freshly minted key with its record. The key is shown once: the
/// registry keeps only its digest.
public struct MintedAssistantKey: Sendable {
  /// The key string, in locked memory.
  public let key: AssistantKey
  /// The key's record as stored.
  public let record: AssistantKeyRecord
}
