import TaskSystem
import TaskVault

/// Every way a backup, restore or doctor run can fail.
///
/// Each case names one cause; none carries secret bytes (paths and
/// reasons only). `description` says what went wrong and `hint` what to
/// do next.
public enum BackupError: Error, Equatable, Sendable {
  /// The file is not a TaskKey backup, or its own structure or a documented
  /// limit failed (magic, lengths, header fields that disagree with the
  /// vault file inside). `reason` says which. Damage of the vault file
  /// inside is `.vault(.damaged)`.
  case damaged(path: String, reason: String)
  /// The backup names a format version this build cannot read.
  case unsupportedVersion(path: String, version: Int)
  /// The passphrase is right but the backup's own tag failed
  /// authentication: the file was altered. (An altered vault store inside
  /// is `.vault(.tampered)`.)
  case tampered(path: String, part: String)
  /// The restore target already holds a vault (or other files); nothing
  /// was changed. `--force` moves it aside first.
  case targetNotEmpty(path: String)
  /// The output file already exists; a backup never overwrites a file.
  case outputExists(path: String)
  /// A system call failed (the wrapped error names the path, the call and
  /// errno).
  case system(SystemError)
  /// The vault refused (locked, not initialised, unsafe permissions …), or
  /// the vault file inside a backup did not open: `.wrongPassphrase`,
  /// `.damaged`, `.tampered`, `.unsupportedVersion`, named
  /// `<backup path> (vault file)`.
  case vault(TaskVaultError)
}

extension BackupError: CustomStringConvertible {
  /// One line that says what went wrong.
  public var description: String {
    switch self {
    case .damaged(let path, let reason): return "'\(path)' is not a usable TaskKey backup: \(reason)"
    case .unsupportedVersion(let path, let version):
      return "'\(path)' is a backup of format version \(version); this build reads version 1 only"
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
    case .tampered: return "do not trust this file; use another backup"
    case .targetNotEmpty:
      return "restore into an empty TASKKEY_HOME, or add --force to move the existing directory aside (it is kept)"
    case .outputExists: return "choose another --out path"
    case .system(let error): return error.hint
    case .vault(.wrongPassphrase): return "use the vault passphrase that was current when the backup was made"
    case .vault(.damaged(let path, _)) where path.hasSuffix(BackupFile.vaultFileLabelSuffix):
      return "check that this is the file 'taskkey backup create' wrote; copy it again from its source"
    case .vault(.tampered(let path, _)) where path.hasSuffix(BackupFile.vaultFileLabelSuffix):
      return "do not trust this file; use another backup"
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
