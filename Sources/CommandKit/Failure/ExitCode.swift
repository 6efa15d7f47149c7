/// Which programs of the project return an exit code.
public struct ExitCodeUsers: OptionSet, Sendable {
  /// The raw bits.
  public let rawValue: UInt8
  /// An option set from its bits.
  public init(rawValue: UInt8) { self.rawValue = rawValue }
  /// `taskkey`.
  public static let taskkey = ExitCodeUsers(rawValue: 1)
  /// `tasker`.
  public static let tasker = ExitCodeUsers(rawValue: 2)
  /// Both.
  public static let both: ExitCodeUsers = [.taskkey, .tasker]
}

/// The exit codes of every command of the project, one table: a number
/// means one thing in `taskkey` and in `tasker`, and each program lists
/// the codes it returns (`users`). Codes 64 and up follow BSD
/// `sysexits.h`; 10 to 19 are cryptographic, vault and lookup outcomes; 20
/// to 25 assistant keys and the note key; 26 pairing; 30 vectors; 40 and 41 passphrase
/// entry; 50 to 53 Tasker's database and gate; 56 to 60 planning providers. Both `--help` texts, both
/// man pages, README.md, Apps/Tasker/README.md and SECURITY.md §11 are
/// printed from or checked against this table by the tests.
public enum ExitCode: Int32, CaseIterable, Sendable {
  /// The command did what was asked.
  case success = 0
  /// A sealed value, body or attachment failed authentication: tampered,
  /// wrong key, wrong context or moved to another record.
  case authenticationFailed = 10
  /// A sealed value names a key id the keyring does not hold.
  case unknownKey = 11
  /// A sealed value or file names a format version this build cannot read.
  case unsupportedVersion = 12
  /// The passphrase does not open the vault or sync bundle.
  case wrongPassphrase = 13
  /// The vault is locked: never unlocked, locked, restarted or expired.
  case vaultLocked = 14
  /// A vault, registry, bundle or protection-settings file is damaged or
  /// was altered.
  case tampered = 15
  /// No vault at the location (not initialised).
  case vaultNotFound = 16
  /// A key is still in use: `taskkey retire` refused (the primary, or a
  /// given value still sealed by it), or `tasker keys --check` found
  /// stored values it seals.
  case keyInUse = 17
  /// `doctor` found a problem it did not (or could not) repair.
  case doctorProblems = 18
  /// No vault item, task, page, attachment, approval or receipt has the
  /// given name or id.
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
  /// The vault's primary note key changed while a value was sealed
  /// (`taskkey rotate` during the command); nothing was stored.
  case keyChanged = 25
  /// Pairing failed: key confirmation did not verify (a wrong code, or a
  /// message changed on the way), the peer broke the protocol or aborted,
  /// or the channel was tampered with; the offer has ended and no vault
  /// was written.
  case pairingFailed = 26
  /// `vectors check` found a case that did not give its expected outcome.
  case vectorsFailed = 30
  /// A passphrase is needed and there is no terminal to ask for it.
  case noTerminal = 40
  /// A passphrase was refused before any key work: empty, too long, the
  /// two entries differ, or weak without `--accept-weak-passphrase`.
  case passphraseRefused = 41
  /// The database was written by a newer Tasker.
  case databaseTooNew = 50
  /// Another Tasker process holds the database.
  case databaseBusy = 51
  /// SQLite reported an error, or the file is not a Tasker database, or
  /// it is damaged.
  case databaseError = 52
  /// The gate refused: the approval was already decided, the receipt
  /// cannot be undone or was undone, or the key that asked is no longer
  /// valid.
  case gateRefused = 53
  /// The sync storage (a WebDAV server) refused the credential (HTTP 401
  /// or 403).
  case syncCredentialRejected = 54
  /// The sync storage is full (HTTP 507 Insufficient Storage).
  case syncStorageFull = 55
  /// A planning provider on the public network was not confirmed (no
  /// terminal and no `--yes`, or the answer was no); nothing was sent.
  case providerNotConfirmed = 56
  /// The planning provider refused the key (HTTP 401 or 403).
  case providerKeyRejected = 57
  /// The planning provider is limiting requests (HTTP 429).
  case providerRateLimited = 58
  /// The planning provider answered another status than 200.
  case providerFailed = 59
  /// The planning provider's answer was refused: not the JSON asked for,
  /// an id it was not given or a repeated one, control characters, too
  /// long, cut short or too large.
  case providerAnswerRefused = 60
  /// The sync storage held something that was refused: a marker that is
  /// not this target's, or an object forged, altered, moved, replayed or
  /// missing in a device's sequence. Nothing of it was applied.
  case syncRefused = 61
  /// Sync is not set up for this database (`tasker sync setup`).
  case syncNotSetUp = 62
  /// The command line is wrong: unknown option, missing argument.
  case usage = 64
  /// The input data is malformed (bad base64, truncated, bad key file, a
  /// refused value).
  case dataError = 65
  /// An input file or the database does not exist or cannot be opened.
  case noInput = 66
  /// A service the command needs is unavailable: the HTTP server could
  /// not listen, a planning provider could not be reached (no connection,
  /// a timeout, a failed TLS check, a redirect), a pairing peer did not
  /// connect or answer in time, or the editor could not start or did not
  /// exit 0.
  case unavailable = 69
  /// An internal error: a bug or a failed library call.
  case software = 70
  /// The operating system refused a resource (locked memory, randomness,
  /// process hardening at start-up).
  case osError = 71
  /// An output file, vault or assistant key exists already; nothing was
  /// overwritten.
  case cannotCreate = 73
  /// Reading or writing failed.
  case ioError = 74
  /// A file's or folder's permissions or owner are unsafe (or it is a
  /// symbolic link) and it was refused.
  case permission = 77

  /// Which programs return this code.
  public var users: ExitCodeUsers {
    switch self {
    case .wrongPassphrase, .vectorsFailed, .noTerminal, .passphraseRefused, .pairingFailed: return .taskkey
    case .keyChanged, .databaseTooNew, .databaseBusy, .databaseError, .gateRefused, .providerNotConfirmed,
      .providerKeyRejected, .providerRateLimited, .providerFailed, .providerAnswerRefused, .syncRefused, .syncNotSetUp,
      .syncCredentialRejected, .syncStorageFull:
      return .tasker
    case .success, .authenticationFailed, .unknownKey, .unsupportedVersion, .vaultLocked, .tampered, .vaultNotFound,
      .keyInUse, .doctorProblems, .notFound, .malformedAssistantKey, .assistantKeyChecksum, .unknownAssistantKey,
      .revokedAssistantKey, .expiredAssistantKey, .usage, .dataError, .noInput, .software, .osError, .cannotCreate,
      .ioError, .permission, .unavailable:
      return .both
    }
  }

  /// One line for the tables in help, man pages and READMEs.
  public var summary: String {
    switch self {
    case .success: return "success"
    case .authenticationFailed: return "authentication failed: tampered value, wrong key, wrong context or moved"
    case .unknownKey: return "unknown key id: the keyring has no such key"
    case .unsupportedVersion: return "unsupported format version"
    case .wrongPassphrase: return "wrong passphrase"
    case .vaultLocked: return "the vault is locked; run 'taskkey unlock'"
    case .tampered: return "a vault, registry, bundle or settings file is damaged or was altered"
    case .vaultNotFound: return "no vault here; run 'taskkey init' or set TASKKEY_HOME"
    case .keyInUse: return "the key is still in use (the primary, or stored values it seals)"
    case .doctorProblems: return "doctor found a problem it did not repair"
    case .notFound: return "no item, task, page, attachment, approval or receipt by that name or id"
    case .malformedAssistantKey: return "assistant key malformed: not 'tk_' and 49 letters and digits"
    case .assistantKeyChecksum: return "assistant key checksum mismatch: mistyped or cut short"
    case .unknownAssistantKey: return "unknown assistant key or key id"
    case .revokedAssistantKey: return "assistant key revoked"
    case .expiredAssistantKey: return "assistant key expired"
    case .keyChanged: return "the primary note key changed during the command; nothing stored, run it again"
    case .pairingFailed: return "pairing failed: wrong code, tampered connection or a refused message; offer ended"
    case .vectorsFailed: return "vectors check: at least one vector failed"
    case .noTerminal: return "a passphrase is needed and there is no terminal; use --passphrase-file or --passphrase-fd"
    case .passphraseRefused: return "passphrase refused: empty, too long, entries differ, or weak and not accepted"
    case .databaseTooNew: return "the database was written by a newer Tasker"
    case .databaseBusy: return "another Tasker process holds the database"
    case .databaseError: return "SQLite error, or not a Tasker database, or a damaged one"
    case .gateRefused: return "the gate refused: approval decided, receipt not undoable, or key no longer valid"
    case .providerNotConfirmed: return "nothing sent: a public-network provider was not confirmed (terminal or --yes)"
    case .providerKeyRejected: return "the planning provider refused the key (HTTP 401 or 403)"
    case .providerRateLimited: return "the planning provider is limiting requests (HTTP 429); try later"
    case .providerFailed: return "the planning provider answered another status than 200"
    case .providerAnswerRefused:
      return "the provider's answer was refused: not the JSON asked, unknown ids, control characters"
    case .syncCredentialRejected: return "the sync storage refused the credential (HTTP 401 or 403)"
    case .syncStorageFull: return "the sync storage is full (HTTP 507); nothing changed here"
    case .syncRefused: return "the sync storage held something refused (forged, altered, moved, missing); not applied"
    case .syncNotSetUp: return "sync is not set up for this database; run 'tasker sync setup DIR'"
    case .usage: return "usage error: unknown option, missing or extra argument"
    case .dataError: return "malformed input or a refused value: bad base64, truncated, too large, not UTF-8"
    case .noInput: return "an input file or the database does not exist or cannot be opened"
    case .unavailable:
      return "a server could not listen, a provider or pairing peer could not be reached in time, or the editor failed"
    case .software: return "internal error"
    case .osError: return "the system refused a resource (locked memory, process hardening)"
    case .cannotCreate: return "will not overwrite: the output file, vault or assistant's key exists already"
    case .ioError: return "read or write failed"
    case .permission: return "unsafe file permissions, owner or symlink; the file was refused"
    }
  }
}
