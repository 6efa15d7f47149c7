import TaskSystem
import TaskVault

/// Every way a backup, restore or doctor run can fail.
///
/// Each case names one cause; none carries secret bytes (paths and
/// reasons only). `description` says what went wrong and `hint` what to
/// do next.
public enum BackupError: Error, Equatable, Sendable {
  /// The file is not a TaskKey backup, or its structure or a documented
  /// limit failed (magic, lengths, the vault file inside, header fields
  /// that disagree with it). `reason` says which.
  case damaged(path: String, reason: String)
  /// The backup names a format version this build cannot read.
  case unsupportedVersion(path: String, version: Int)
  /// The passphrase does not open the vault file inside the backup.
  case wrongPassphrase
  /// The passphrase is right but the backup's tag, or the vault store it
  /// carries, failed authentication: the file was altered.
  case tampered(path: String, part: String)
  /// The restore target already holds a vault (or other files); nothing
  /// was changed. `--force` moves it aside first.
  case targetNotEmpty(path: String)
  /// The output file already exists; a backup never overwrites a file.
  case outputExists(path: String)
  /// A system call failed (the wrapped error names the path, the call and
  /// errno).
  case system(SystemError)
  /// The vault refused (locked, not initialised, unsafe permissions …).
  case vault(TaskVaultError)
}

extension BackupError: CustomStringConvertible {
  /// One line that says what went wrong.
  public var description: String {
    switch self {
    case .damaged(let path, let reason): return "'\(path)' is not a usable TaskKey backup: \(reason)"
    case .unsupportedVersion(let path, let version):
      return "'\(path)' is a backup of format version \(version); this build reads version 1 only"
    case .wrongPassphrase: return "wrong passphrase for this backup"
    case .tampered(let path, let part): return "'\(path)' was altered: the \(part) failed authentication"
    case .targetNotEmpty(let path): return "'\(path)' already holds a vault or other files; nothing was restored"
    case .outputExists(let path): return "'\(path)' already exists; a backup never overwrites a file"
    case .system(let error): return error.description
    case .vault(let error): return error.description
    }
  }

  /// What to do next.
  public var hint: String? {
    switch self {
    case .damaged: return "check that this is the file 'taskkey backup create' wrote; copy it again from its source"
    case .unsupportedVersion: return "restore with a newer TaskKey"
    case .wrongPassphrase: return "use the vault passphrase that was current when the backup was made"
    case .tampered: return "do not trust this file; use another backup"
    case .targetNotEmpty:
      return "restore into an empty TASKKEY_HOME, or add --force to move the existing directory aside (it is kept)"
    case .outputExists: return "choose another --out path"
    case .system(let error): return error.hint
    case .vault(let error): return error.hint
    }
  }
}

/// Runs a vault call, wrapping its errors as `BackupError.vault`.
func vaultCall<Result>(_ body: () throws -> Result) throws -> Result {
  do {
    return try body()
  } catch let error as TaskVaultError {
    throw BackupError.vault(error)
  }
}
