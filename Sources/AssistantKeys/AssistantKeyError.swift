import TaskCrypto
import TaskSystem
import TaskVault

/// Every way an AssistantKeys operation can fail.
///
/// `AssistantKeyRegistry.verify` throws only the first seven cases
/// (`malformedKey`, `badChecksum`, `unknownKey`, `revoked`, `expired`,
/// `vaultLocked`, `registryDamaged`); there is no other outcome and no
/// fallback. No case carries key material: a presented key is never
/// repeated, only its length or the offset of a bad character; ids are
/// public.
public enum AssistantKeyError: Error, Equatable, Sendable {
  /// The presented string is not a version-1 key string (wrong length,
  /// prefix or character, or a body that encodes 2^256 or more). Nothing
  /// was looked up.
  case malformedKey(MalformedKey)
  /// The presented string has the shape of a key but its checksum does not
  /// match: a typo, a copy-paste error or a truncation. Nothing was looked up.
  case badChecksum
  /// The key is well formed but not in the registry: never minted here,
  /// minted on another device, or the registry was replaced.
  case unknownKey
  /// The key was revoked (directly, by rotation, or when its overlap window
  /// ended). Revocation is permanent.
  case revoked(AssistantKeyID)
  /// The key's expiry time has passed.
  case expired(AssistantKeyID)
  /// The vault that holds the registry's integrity key is locked, so the
  /// registry cannot be authenticated. Callers map their vault's locked
  /// error to this case, or pass a nil key to the registry.
  case vaultLocked
  /// The registry cannot be trusted or read: altered without the integrity
  /// key, written under another key, truncated, of an unknown version,
  /// unsafe permissions, or unreadable. Every key fails until it is fixed.
  case registryDamaged(RegistryDamage)

  /// An assistant name is not 1 to 64 characters of `A-Z a-z 0-9 . _ -`
  /// starting with a letter or digit.
  case invalidName(String)
  /// A capability grant is not 1 to 64 characters of `a-z 0-9 . _ : -`
  /// starting with a letter.
  case invalidGrant(String)
  /// More grants than the hard limit.
  case tooManyGrants(count: Int, limit: Int)
  /// A duration (expiry or overlap) is zero, negative or above its limit;
  /// `limit` is in seconds.
  case invalidDuration(seconds: Int64, limit: Int64)
  /// The assistant already has a current key; rotate it instead of minting.
  case nameInUse(String)
  /// No current (unrevoked) key has this assistant name, so there is
  /// nothing to rotate.
  case noSuchAssistant(String)
  /// No key in the registry has this id.
  case unknownID(AssistantKeyID)
  /// The registry holds the maximum number of keys.
  case registryFull(limit: Int)
  /// A file-system call failed while writing the registry; the registry on
  /// disk is the one from before the call unless the failed call is the
  /// final directory sync (`fsync(directory)`), in which case the write
  /// happened but may not survive a crash.
  case system(SystemError)
  /// Two keys drew the same id or digest (2^-64 per pair); nothing was
  /// stored. Mint again.
  case idCollision
  /// TaskCrypto failed (no locked memory, no randomness).
  case crypto(TaskCryptoError)
  /// The vault that holds the integrity key and the generation failed for
  /// a reason other than being locked (not initialised, damaged, unsafe
  /// permissions …).
  case vault(TaskVaultError)
  /// The registry was written (it holds `generation`) but its rollback
  /// anchor in the device-only store was not: the change is in effect on
  /// this device but not permanent, since an older registry put back would
  /// undo it. Nothing was acknowledged (a minted key was not shown); running
  /// the command again once `reason` is fixed finishes it.
  case notPermanent(generation: UInt64, reason: String)

  /// Why a presented string is not a key string.
  public enum MalformedKey: Equatable, Sendable {
    /// Not 52 bytes long; carries the length presented.
    case wrongLength(Int)
    /// Does not start with `tk_`.
    case missingPrefix
    /// A byte after the prefix is not a base62 digit; carries its offset.
    case invalidCharacter(offset: Int)
    /// The 43-digit body encodes a value of 2^256 or more, so no key was
    /// ever minted with it.
    case bodyOutOfRange
  }

  /// What is wrong with the registry.
  public enum RegistryDamage: Equatable, Sendable {
    /// The integrity code does not verify: the file was changed by someone
    /// without the integrity key, or the key is not the one it was written
    /// under.
    case authenticationFailed
    /// The file does not follow the format; `line` is 1-based in a
    /// version-1 file, 0 for the file as a whole or a version-2 file.
    case malformed(line: Int, reason: String)
    /// The file names a registry version this build does not read.
    case unsupportedVersion(String)
    /// The file is larger than the hard limit.
    case tooLarge(byteCount: Int, limit: Int)
    /// The file or directory cannot be read or trusted: a symlink, not a
    /// regular file or directory, not owned by this user, readable or
    /// writable by group or others, or a read-side call failed.
    case unreadable(SystemError)
    /// The vault's integrity-key item is missing while a registry exists,
    /// or is not device-only, or is not 32 bytes.
    case integrityKeyUnavailable(reason: String)
    /// The registry file is authentic but older than the newest generation
    /// the vault remembers: an old copy was put back, which would revive
    /// keys revoked since.
    case rolledBack(found: UInt64, expected: UInt64)
  }
}

extension AssistantKeyError: CustomStringConvertible {
  /// One line that says what went wrong and what to do next. Never
  /// contains a key.
  public var description: String {
    switch self {
    case .malformedKey(let reason):
      return "malformed assistant key: \(reason); a key is 'tk_' and 49 letters and digits, 52 characters in all"
    case .badChecksum:
      return
        "assistant key checksum mismatch: the key was mistyped or cut short; copy it again from where it was stored"
    case .unknownKey:
      return "unknown assistant key: it is not in this device's registry; mint a key with 'taskkey mint'"
    case .revoked(let id):
      return "assistant key \(id) is revoked; mint or rotate a new key for the assistant"
    case .expired(let id):
      return "assistant key \(id) has expired; rotate the assistant's key with 'taskkey rotate --assistant NAME'"
    case .vaultLocked:
      return "the vault is locked, so the assistant key registry cannot be checked; unlock it with 'taskkey unlock'"
    case .registryDamaged(let damage):
      return
        "the assistant key registry cannot be trusted (\(damage)); every key is refused. If you did not change it, "
        + "someone else did: to start over, move device-only/assistant-keys.registry out of the vault directory and mint new keys"
    case .invalidName(let name):
      return
        "invalid assistant name '\(name.prefix(64))': use 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit"
    case .invalidGrant(let grant):
      return "invalid grant '\(grant.prefix(64))': use 1 to 64 of a-z 0-9 . _ : -, starting with a letter"
    case .tooManyGrants(let count, let limit):
      return "\(count) grants given; at most \(limit) are allowed"
    case .invalidDuration(let seconds, let limit):
      return "duration of \(seconds) seconds is not allowed; give more than 0 and at most \(limit) seconds"
    case .nameInUse(let name):
      return "assistant '\(name)' already has a current key; use 'taskkey rotate --assistant \(name)' to replace it"
    case .noSuchAssistant(let name):
      return "no current key for assistant '\(name)'; mint one with 'taskkey mint --name \(name)'"
    case .unknownID(let id):
      return "no assistant key has id \(id); 'taskkey list' shows the ids"
    case .registryFull(let limit):
      return "the registry holds the maximum of \(limit) keys; revoked keys are kept forever, so use another registry"
    case .system(let error):
      return "\(error); check the disk and permissions, then try again"
    case .idCollision: return "two assistant keys drew the same id; nothing was stored, mint again"
    case .crypto(let error): return error.description
    case .vault(let error): return error.description
    case .notPermanent(let generation, let reason):
      return
        "the registry now holds generation \(generation), but its rollback anchor in the device-only store could "
        + "not be saved (\(reason)): the change is in effect here but not permanent, as an older registry put back "
        + "would undo it; fix the cause and run the command again (a key minted by it was not shown: revoke it)"
    }
  }
}

extension AssistantKeyError.MalformedKey: CustomStringConvertible {
  /// The reason in words.
  public var description: String {
    switch self {
    case .wrongLength(let count): return "\(count) bytes long instead of 52"
    case .missingPrefix: return "it does not start with 'tk_'"
    case .invalidCharacter(let offset): return "byte \(offset) is not a letter or digit"
    case .bodyOutOfRange: return "its body is out of range"
    }
  }
}

extension AssistantKeyError.RegistryDamage: CustomStringConvertible {
  /// The damage in words, with the path where one is known.
  public var description: String {
    switch self {
    case .authenticationFailed:
      return "integrity check failed: altered without the vault's key, or written under another key"
    case .malformed(let line, let reason):
      // Line 0: a defect of the whole file, or of the binary version 2.
      return line > 0 ? "malformed at line \(line): \(reason)" : "malformed: \(reason)"
    case .unsupportedVersion(let version):
      return "unsupported registry version '\(version.prefix(40))'; upgrade TaskKey"
    case .tooLarge(let count, let limit): return "file of \(count) bytes exceeds the limit of \(limit) bytes"
    case .unreadable(let error): return error.description
    case .integrityKeyUnavailable(let reason): return "no usable integrity key: \(reason)"
    case .rolledBack(let found, let expected):
      return
        "the registry is generation \(found) but the vault remembers generation \(expected): an older copy was put back"
    }
  }
}
