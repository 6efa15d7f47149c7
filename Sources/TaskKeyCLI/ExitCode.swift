/// The exit codes of `taskkey`, one table that scripts can rely on.
///
/// Codes 64 and up follow BSD `sysexits.h`; codes 10 to 19 name
/// cryptographic and vault outcomes; 20 to 24 assistant-key outcomes; 40
/// and 41 passphrase entry. README.md and `taskkey --help` print the table;
/// `FailureReport` is the one map from errors to these codes.
public enum ExitCode: Int32, CaseIterable, Sendable {
  /// The command did what was asked.
  case success = 0
  /// A sealed value failed authentication: tampered, wrong key or wrong
  /// context.
  case authenticationFailed = 10
  /// A sealed value names a key id the keyring does not hold.
  case unknownKey = 11
  /// A sealed value or file names a format version this build cannot read.
  case unsupportedVersion = 12
  /// The passphrase does not open the vault or sync bundle.
  case wrongPassphrase = 13
  /// The vault is locked: never unlocked, locked, restarted or expired.
  case vaultLocked = 14
  /// A vault, registry or bundle file is damaged or was altered.
  case tampered = 15
  /// No vault at the location (not initialised).
  case vaultNotFound = 16
  /// `retire` refused: the key is the primary, or a given value is still
  /// sealed by it.
  case keyInUse = 17
  /// `doctor` found a problem it did not (or could not) repair.
  case doctorProblems = 18
  /// No vault item has the given name.
  case notFound = 19
  /// An assistant key is not a key string: wrong length, prefix or character.
  case malformedAssistantKey = 20
  /// An assistant key's checksum does not match: mistyped or cut short.
  case assistantKeyChecksum = 21
  /// An assistant key (or key id) is not in this device's registry.
  case unknownAssistantKey = 22
  /// An assistant key was revoked.
  case revokedAssistantKey = 23
  /// An assistant key has expired.
  case expiredAssistantKey = 24
  /// `vectors check` found a case that did not give its expected outcome.
  case vectorsFailed = 30
  /// A passphrase is needed and there is no terminal to ask for it.
  case noTerminal = 40
  /// A passphrase was refused before any key work: empty, too long, the
  /// two entries differ, or weak without `--accept-weak-passphrase`.
  case passphraseRefused = 41
  /// The command line is wrong: unknown option, missing argument.
  case usage = 64
  /// The input data is malformed (bad base64, truncated, bad key file).
  case dataError = 65
  /// An input file does not exist or cannot be opened.
  case noInput = 66
  /// An internal error: a bug or a failed library call.
  case software = 70
  /// The operating system refused a resource (locked memory, randomness).
  case osError = 71
  /// An output file, vault or assistant key exists already; nothing was
  /// overwritten.
  case cannotCreate = 73
  /// Reading or writing failed.
  case ioError = 74
  /// A file's permissions or owner are unsafe and it was refused.
  case permission = 77

  /// One line for the table in help and README.
  public var summary: String {
    switch self {
    case .success: return "success"
    case .authenticationFailed: return "authentication failed: tampered value, wrong key or wrong context"
    case .unknownKey: return "unknown key id: the keyring has no such key"
    case .unsupportedVersion: return "unsupported format version"
    case .wrongPassphrase: return "wrong passphrase"
    case .vaultLocked: return "the vault is locked; run 'taskkey unlock'"
    case .tampered: return "a vault, registry or bundle file is damaged or was altered"
    case .vaultNotFound: return "no vault here; run 'taskkey init' or set TASKKEY_HOME"
    case .keyInUse: return "retire refused: the key is the primary, or a given value still uses it"
    case .doctorProblems: return "doctor found a problem it did not repair; run 'taskkey doctor --repair'"
    case .malformedAssistantKey: return "assistant key malformed: not 'tk_' and 49 letters and digits"
    case .assistantKeyChecksum: return "assistant key checksum mismatch: mistyped or cut short"
    case .unknownAssistantKey: return "unknown assistant key or key id"
    case .revokedAssistantKey: return "assistant key revoked"
    case .expiredAssistantKey: return "assistant key expired"
    case .vectorsFailed: return "vectors check: at least one vector failed"
    case .notFound: return "no vault item by that name"
    case .noTerminal: return "a passphrase is needed and there is no terminal; use --passphrase-file or --passphrase-fd"
    case .passphraseRefused: return "passphrase refused: empty, too long, entries differ, or weak and not accepted"
    case .cannotCreate: return "will not overwrite: the output file, vault or assistant's key exists already"
    case .usage: return "usage error: unknown option, missing or extra argument"
    case .dataError: return "malformed input: bad base64, truncated value, bad key file"
    case .noInput: return "an input file does not exist or cannot be opened"
    case .software: return "internal error"
    case .osError: return "the system refused a resource (locked memory)"
    case .ioError: return "read or write failed"
    case .permission: return "unsafe file permissions or owner; the file was refused"
    }
  }
}
