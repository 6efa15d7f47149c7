import TaskCrypto
import TaskSystem

/// Why a vault counts as locked.
public enum LockReason: String, Sendable, Equatable {
  /// The vault has not been unlocked since it was last locked, or ever.
  case notUnlocked = "not unlocked"
  /// The machine restarted since the vault was unlocked (the boot id
  /// changed, or the in-memory session key is gone).
  case machineRestarted = "the machine restarted since it was unlocked"
  /// A timed unlock (`unlock(for:)`) ran out.
  case expired = "the timed unlock expired"
  /// The session file is there and the boot id matches, but the session
  /// key is gone from the runtime directory: a logout with RemoveIPC, or
  /// something else removed it.
  case sessionKeyGone = "the session key is gone from memory (a logout or a cleaner removed it)"
  /// The session key present does not open the session file: a later or
  /// interrupted unlock, or a session file put back from elsewhere.
  case sessionKeyMismatch = "the unlock session does not open with the session key in memory"
  /// The session opened, but its device-only wrap key is not the one its
  /// master key derives: the session cannot be trusted.
  case sessionInconsistent = "the unlock session's keys do not belong together"
}

/// Every way a vault operation can fail.
///
/// Each case names one cause, so a caller (and the `taskkey` exit code)
/// can tell a wrong passphrase from a damaged file from a locked vault.
/// No case carries secret bytes: item names and paths are shown, item
/// values, keys and passphrases never.
public enum TaskVaultError: Error, Equatable, Sendable {
  /// No vault file exists at this directory; run `taskkey init`.
  case notInitialised(path: String)
  /// A vault already exists here; `init` never replaces one.
  case alreadyInitialised(path: String)
  /// The passphrase is empty; a vault needs a non-empty passphrase.
  case emptyPassphrase
  /// The passphrase is longer than the limit in bytes.
  case passphraseTooLong(limit: Int)
  /// The passphrase does not open this vault or sync bundle (both master
  /// keys failed to unwrap, or the bundle's passphrase check differs).
  case wrongPassphrase
  /// The file is corrupt or truncated: its checksum, structure or a
  /// documented limit failed. `reason` names what, without secret bytes.
  case damaged(path: String, reason: String)
  /// The file's checksum is intact but an authenticated part failed to
  /// verify with the right key: the file was deliberately altered.
  case tampered(path: String, part: String)
  /// The file names a format version this build cannot read.
  case unsupportedVersion(path: String, version: Int)
  /// The vault is locked; `reason` says why. Run `taskkey unlock`.
  case locked(reason: LockReason)
  /// A vault file or directory was refused (readable by group or others,
  /// another user's, behind another user's symlink, of the wrong type) or
  /// a system call on it failed; the wrapped error names the path, and
  /// for a failed call the call and errno.
  case system(SystemError)
  /// No item has this name.
  case itemNotFound(name: String)
  /// An item name breaks the naming rules; `reason` says which.
  case invalidItemName(reason: String)
  /// An item label breaks the label rules; `reason` says which.
  case invalidLabel(reason: String)
  /// An item value is larger than the limit.
  case itemTooLarge(byteCount: Int, limit: Int)
  /// A store would exceed a documented limit (items, keys or bytes).
  case storeFull(reason: String)
  /// An item of this name already exists in the other class; remove it
  /// first (a device-only item never silently becomes synchronisable).
  case itemClassConflict(name: String, existing: VaultItemClass)
  /// A sync bundle holds a key whose id is in this vault with different
  /// key bytes; nothing was imported.
  case keyConflict(KeyID)
  /// A note key id was retired (here or on a device whose bundle was
  /// imported): it cannot come back, nor be made the primary.
  case retiredKey(KeyID)
  /// The after-first-unlock state cannot be kept on this machine (no
  /// tmpfs runtime directory, or an unsafe one); `reason` says what.
  case unlockUnavailable(reason: String)
  /// A TaskCrypto operation failed for a reason not covered above.
  case crypto(TaskCryptoError)
}

extension TaskVaultError: CustomStringConvertible {
  /// One line that says what went wrong; `hint` says what to do next.
  public var description: String {
    switch self {
    case .notInitialised(let path): return "no vault at '\(path)'"
    case .alreadyInitialised(let path): return "a vault already exists at '\(path)'"
    case .emptyPassphrase: return "the passphrase is empty"
    case .passphraseTooLong(let limit): return "the passphrase is longer than \(limit) bytes"
    case .wrongPassphrase: return "wrong passphrase"
    case .damaged(let path, let reason): return "'\(path)' is damaged: \(reason)"
    case .tampered(let path, let part): return "'\(path)' was altered: the \(part) failed authentication"
    case .unsupportedVersion(let path, let version):
      return "'\(path)' has format version \(version); this build reads version 1 only"
    case .locked(let reason): return "the vault is locked (\(reason.rawValue))"
    case .system(let error): return error.description
    case .itemNotFound(let name): return "no item named '\(name)'"
    case .invalidItemName(let reason): return "invalid item name: \(reason)"
    case .invalidLabel(let reason): return "invalid label: \(reason)"
    case .itemTooLarge(let count, let limit): return "item value of \(count) bytes exceeds the limit of \(limit) bytes"
    case .storeFull(let reason): return "the store is full: \(reason)"
    case .itemClassConflict(let name, let existing):
      return "item '\(name)' already exists as \(existing.rawName)"
    case .keyConflict(let id): return "note key \(id) exists here with different key bytes; nothing was imported"
    case .retiredKey(let id): return "note key \(id) was retired and stays retired; nothing was changed"
    case .unlockUnavailable(let reason): return "cannot keep the vault unlocked: \(reason)"
    case .crypto(let error): return error.description
    }
  }

  /// What to do next, when there is something useful to say.
  public var hint: String? {
    switch self {
    case .notInitialised: return "run 'taskkey init' to make a vault, or set TASKKEY_HOME to the vault directory"
    case .alreadyInitialised: return "use the existing vault, or choose another TASKKEY_HOME"
    case .emptyPassphrase: return "choose a passphrase of at least one character"
    case .wrongPassphrase: return "check the passphrase and try again"
    case .damaged:
      return "restore the vault directory from a backup; if 'vault.tkv.prev' exists it is the previous generation"
    case .tampered: return "do not trust this file; restore the vault directory from a backup"
    case .unsupportedVersion: return "upgrade TaskKey"
    case .locked: return "run 'taskkey unlock'"
    case .system(.notOwner(let path)): return "run taskkey as the owner of '\(path)'"
    case .system(.untrustedSymlink): return "use a path without other users' symbolic links (set TASKKEY_HOME)"
    case .system(let error): return error.hint
    case .itemNotFound: return "run 'taskkey item list' to see the names"
    case .itemClassConflict(let name, _): return "run 'taskkey item remove \(name)' first"
    case .keyConflict: return "the two vaults disagree about a key id; keep both bundles and report this"
    case .retiredKey: return "rotate to a new key instead; a retired key never comes back ('taskkey rotate')"
    case .unlockUnavailable: return "make sure /dev/shm is a tmpfs owned by root with mode 1777"
    default: return nil
    }
  }
}
