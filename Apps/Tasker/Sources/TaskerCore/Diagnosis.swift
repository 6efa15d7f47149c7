/// How much a finding of `TaskStore.diagnose(home:keys:)` matters.
public enum DiagnosisSeverity: String, Sendable, Equatable, CaseIterable, Comparable {
  /// A check that passed.
  case ok
  /// Worth knowing; nothing to fix (a new home, attachments stored plain by choice).
  case info
  /// Something the user may want to act on (plain bodies with encryption
  /// on, calls waiting for approval, a file no row names).
  case warning
  /// Something is wrong: a file others can read or change, a damaged
  /// database, a row whose file is missing or refused.
  case error

  /// `ok` < `info` < `warning` < `error`.
  public static func < (lhs: DiagnosisSeverity, rhs: DiagnosisSeverity) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }
}

/// What a finding is about, as a stable machine-readable name: the raw
/// value (snake_case) is what `tasker doctor --json` prints and scripts
/// match on; it never changes meaning.
public enum DiagnosisCode: String, Sendable, Equatable, CaseIterable {
  /// The home directory does not exist yet (info).
  case homeMissing = "home_missing"
  /// The home directory is not private: mode, owner or another user's symlink (error).
  case homeNotPrivate = "home_not_private"
  /// No `tasker.db` yet (info).
  case databaseMissing = "database_missing"
  /// `tasker.db` or its `-wal`, `-shm`, `-journal` is not a private regular file (error).
  case databaseFileNotPrivate = "database_file_not_private"
  /// `attachments/` is not a private directory, or is a symlink (error).
  case attachmentsDirectoryNotPrivate = "attachments_directory_not_private"
  /// A file in `attachments/` is not a private regular file (error).
  case attachmentFileNotPrivate = "attachment_file_not_private"
  /// Every file and folder checked is private to the user (ok).
  case filesPrivate = "files_private"
  /// The database was not opened because a file is not private (info).
  case databaseChecksSkipped = "database_checks_skipped"
  /// The database cannot be opened or read (error).
  case databaseUnreadable = "database_unreadable"
  /// The database was written by a newer Tasker (error).
  case schemaTooNew = "schema_too_new"
  /// The database's schema is older than this build's; the next change migrates it (warning).
  case schemaOutdated = "schema_outdated"
  /// `PRAGMA integrity_check` says ok (ok).
  case integrityOK = "integrity_ok"
  /// `PRAGMA integrity_check` reports damage, or the database is malformed (error).
  case integrityFailed = "integrity_failed"
  /// `PRAGMA foreign_key_check` finds nothing (ok).
  case foreignKeysOK = "foreign_keys_ok"
  /// Rows refer to rows that do not exist (error).
  case foreignKeyViolation = "foreign_key_violation"
  /// New note text and page bodies are sealed (ok).
  case bodyEncryptionOn = "body_encryption_on"
  /// New note text and page bodies are stored plain (warning).
  case bodyEncryptionOff = "body_encryption_off"
  /// New attachment files are sealed (ok).
  case attachmentEncryptionOn = "attachment_encryption_on"
  /// New attachment files are stored plain, the default (info).
  case attachmentEncryptionOff = "attachment_encryption_off"
  /// The protection settings could not be read, for example with the vault locked (warning).
  case protectionSettingsUnknown = "protection_settings_unknown"
  /// Note text or page bodies are stored plain (warning with encryption on, else info).
  case plainBodiesStored = "plain_bodies_stored"
  /// Attachment files are stored plain (info).
  case plainAttachmentsStored = "plain_attachments_stored"
  /// Which key ids seal stored values, with counts (info).
  case keysInUse = "keys_in_use"
  /// Sealed values or attachment files that name no key this build can read (warning).
  case sealedValuesUnreadable = "sealed_values_unreadable"
  /// Calls of an assistant wait for the user's approval (warning).
  case approvalsPending = "approvals_pending"
  /// A file in `attachments/` that no row names (warning).
  case attachmentFileOrphan = "attachment_file_orphan"
  /// An attachment row whose file does not exist (error).
  case attachmentFileMissing = "attachment_file_missing"
  /// An attachment row refused before its file is read: its `file` column,
  /// its owner, or its sealing disagrees with the file (error).
  case attachmentRowRefused = "attachment_row_refused"
  /// Every attachment row has its file and every file its row (ok).
  case attachmentsConsistent = "attachments_consistent"
  /// The receipts' hash chain holds from the first receipt, and the head,
  /// if any, verifies and is on it (ok).
  case receiptsIntact = "receipts_intact"
  /// The chain holds but the head was not checked: the vault is locked (info).
  case receiptHeadUnchecked = "receipt_head_unchecked"
  /// A receipt was edited, removed, inserted or moved, or the head is
  /// malformed, forged or off the chain; `subject` is the first broken
  /// receipt (`r3`) or `receipts.head` (error).
  case receiptsTampered = "receipts_tampered"
  /// A check could not run; `message` says which and why (error).
  case checkFailed = "check_failed"
}

/// One finding of `TaskStore.diagnose(home:keys:)`. The strings hold
/// paths, record names, counts and key ids, never note text, page bodies
/// or attachment content; paths and SQLite's messages may hold anything a
/// file name can, so print them through `TerminalText`.
public struct DiagnosisFinding: Sendable, Equatable {
  /// How much it matters.
  public var severity: DiagnosisSeverity
  /// What it is about.
  public var code: DiagnosisCode
  /// The path or record it concerns (`attachment/3`), if one.
  public var subject: String?
  /// One line saying what was found.
  public var message: String
  /// What to do, when there is something to do.
  public var hint: String?

  /// A finding.
  public init(
    _ severity: DiagnosisSeverity, _ code: DiagnosisCode, subject: String? = nil, _ message: String,
    hint: String? = nil
  ) {
    self.severity = severity
    self.code = code
    self.subject = subject
    self.message = message
    self.hint = hint
  }
}

/// How many stored values are sealed and how many plain, and which sealing
/// the protection settings ask for new ones. Counted from the values
/// themselves (a body's marker, a file's first bytes), never from a column
/// that says so.
public struct EncryptionCensus: Sendable, Equatable {
  /// Whether new bodies are sealed, or nil when the settings could not be read.
  public var bodyEncryption: Bool?
  /// Whether new attachment files are sealed, or nil when unknown.
  public var attachmentEncryption: Bool?
  /// Non-empty task notes that are sealed.
  public var sealedNotes = 0
  /// Non-empty task notes stored plain.
  public var plainNotes = 0
  /// Non-empty page bodies that are sealed.
  public var sealedPageBodies = 0
  /// Non-empty page bodies stored plain.
  public var plainPageBodies = 0
  /// Attachment files that carry the attachment magic.
  public var sealedAttachments = 0
  /// Attachment files stored plain.
  public var plainAttachments = 0

  /// A census with every count at zero and the settings unknown.
  public init() {}
}

/// What `tasker doctor` reports about a home: its findings in the order
/// the checks ran (files, database, encryption, keys, approvals,
/// attachments, receipts), and the figures behind them.
public struct Diagnosis: Sendable, Equatable {
  /// Every finding, passed checks included (severity `ok`).
  public var findings: [DiagnosisFinding] = []
  /// The sealed and plain counts, or nil when the database was not read.
  public var encryption: EncryptionCensus?
  /// The key ids sealing stored values, with counts (empty when none, or
  /// when the database was not read).
  public var keys: [KeyUsage] = []
  /// Calls waiting for approval, or nil when the database was not read.
  public var pendingApprovals: Int?

  /// An empty report.
  public init() {}

  /// The most severe finding's severity (`ok` for none).
  public var severity: DiagnosisSeverity { findings.map(\.severity).max() ?? .ok }

  /// The findings with this code.
  public func findings(_ code: DiagnosisCode) -> [DiagnosisFinding] { findings.filter { $0.code == code } }

  mutating func add(
    _ severity: DiagnosisSeverity, _ code: DiagnosisCode, subject: String? = nil, _ message: String,
    hint: String? = nil
  ) {
    findings.append(DiagnosisFinding(severity, code, subject: subject, message, hint: hint))
  }
}
