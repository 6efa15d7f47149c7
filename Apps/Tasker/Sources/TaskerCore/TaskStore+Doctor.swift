import FoundationEssentials
import TaskAttachments
import TaskCrypto
import TaskSystem

/// `tasker doctor`, the store's side: what is wrong with a home, found
/// without changing anything.
extension TaskStore {
  /// Examines the home's files and database and reports every finding,
  /// never changing anything: nothing is written, moved, removed or
  /// re-moded, the database is opened read-only (and not at all while a
  /// file is not private), nothing is migrated, and no note key is asked
  /// for (a locked vault leaves only the protection settings unknown).
  /// Like every reading command, the read-only SQLite connection may
  /// create an empty `tasker.db-wal` and its index `tasker.db-shm` (mode
  /// 0600, as the database) when they are absent; no other file appears.
  ///
  /// The checks, in order, each giving a `DiagnosisCode`:
  /// 1. files: the home directory, `tasker.db` and its `-wal`, `-shm`,
  ///    `-journal`, `attachments/` and every file in it, with the rules
  ///    every open applies (`TaskerHome.checkPrivate`: owned by the user,
  ///    no group or other bits, regular files, no symlinks);
  /// 2. the database: its schema version, `PRAGMA integrity_check`,
  ///    `PRAGMA foreign_key_check`;
  /// 3. encryption: the protection settings and how many note texts, page
  ///    bodies and attachment files are sealed or plain (`EncryptionCensus`);
  /// 4. keys: the key ids sealing stored values (`keyUsage()`);
  /// 5. approvals waiting (`pendingApprovalCount()`);
  /// 6. attachments: rows whose file is missing or refused, and files in
  ///    `attachments/` that no row names;
  /// 7. receipts: the chain and head `tasker receipts --verify` checks
  ///    (`checkReceipts`), a locked vault leaving the head unchecked.
  ///
  /// - Parameters:
  ///   - home: the home to examine.
  ///   - keys: the key source the commands use; only its protection
  ///     records are read.
  /// - Returns: the report; it never throws, since a check that fails is
  ///   itself a finding.
  public static func diagnose(home: TaskerHome, keys: NoteKeySource) -> Diagnosis {
    var report = Diagnosis()
    guard checkFiles(of: home, into: &report) else { return report }
    guard let store = openForDiagnosis(home: home, keys: keys, into: &report) else { return report }
    store.checkEncryption(into: &report)
    store.checkKeys(into: &report)
    do {
      let pending = try store.pendingApprovalCount()
      report.pendingApprovals = pending
      if pending > 0 {
        report.add(
          .warning, .approvalsPending, "\(pending) assistant call\(pending == 1 ? "" : "s") wait for approval",
          hint: "run 'tasker approvals' to see them")
      }
    } catch {
      report.add(.error, .checkFailed, subject: "approvals", "cannot count approvals: \(error)")
    }
    store.checkAttachments(into: &report)
    store.checkReceipts(into: &report)
    return report
  }

  /// Step 1.
  ///
  /// - Returns: true when the database exists and every file is private,
  ///   so it may be opened.
  static func checkFiles(of home: TaskerHome, into report: inout Diagnosis) -> Bool {
    let before = report.findings.count
    func refused(_ code: DiagnosisCode, _ path: String, _ error: Error) {
      let described = (error as? SystemError).map { TaskerError.system($0) }
      report.add(
        .error, code, subject: path, described.map(\.description) ?? "\(error)", hint: described?.hint)
    }
    do {
      guard try PrivateDirectory.check(home.directory) else {
        report.add(.info, .homeMissing, subject: home.directory, "no Tasker home yet; the first change makes it")
        return false
      }
    } catch {
      refused(.homeNotPrivate, home.directory, error)
    }
    let database = home.databasePath
    let exists = FileStatus.exists(database)
    for suffix in ["", "-wal", "-shm", "-journal"] {
      do { try TaskerHome.checkPrivateFile(database + suffix) } catch {
        refused(.databaseFileNotPrivate, database + suffix, error)
      }
    }
    do {
      if try PrivateDirectory.check(home.attachmentsDirectory, allowingSymlink: false) {
        for name in Self.entries(of: home.attachmentsDirectory) {
          let path = home.attachmentsDirectory + "/" + name
          do { try TaskerHome.checkPrivateFile(path) } catch { refused(.attachmentFileNotPrivate, path, error) }
        }
      }
    } catch {
      refused(.attachmentsDirectoryNotPrivate, home.attachmentsDirectory, error)
    }
    let allPrivate = report.findings.count == before
    if allPrivate {
      report.add(.ok, .filesPrivate, subject: home.directory, "every file and folder is private to you")
    } else if exists {
      report.add(
        .info, .databaseChecksSkipped, subject: database,
        "the database was not opened, since a file or folder is not private", hint: "fix the errors above first")
    }
    if !exists {
      report.add(.info, .databaseMissing, subject: database, "no database yet; the first change makes it")
    }
    return allPrivate && exists
  }

  /// The names in a directory (not `.` and `..`), sorted; none when it
  /// cannot be listed (its check reported why).
  static func entries(of directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
  }

  /// Step 2: opens the database read-only and checks it.
  ///
  /// - Returns: a read-only store when the schema is this build's, else nil.
  static func openForDiagnosis(home: TaskerHome, keys: NoteKeySource, into report: inout Diagnosis) -> TaskStore? {
    let path = home.databasePath
    let probe: Connection
    let version: Int
    do {
      probe = try Connection(path: path, create: false, readOnly: true)
      version = try Schema.version(probe)
    } catch let error as TaskerError {
      if case .databaseTooNew = error {
        report.add(.error, .schemaTooNew, subject: path, error.description, hint: error.hint)
      } else {
        report.add(.error, .databaseUnreadable, subject: path, error.description, hint: error.hint)
      }
      return nil
    } catch {
      report.add(.error, .databaseUnreadable, subject: path, "\(error)")
      return nil
    }
    checkIntegrity(probe, into: &report)
    guard version == Schema.current else {
      report.add(
        .warning, .schemaOutdated, subject: path,
        "schema version \(version) is older than this build's \(Schema.current); the next change migrates it",
        hint: "the other checks run once it is migrated")
      return nil
    }
    do {
      return try TaskStore(
        databasePath: path, keys: keys, create: false, fileSystem: PosixFileSystem(), readOnly: true)
    } catch {
      report.add(.error, .databaseUnreadable, subject: path, "\(error)")
      return nil
    }
  }

  /// The most lines of `integrity_check` a finding quotes.
  static let quotedIntegrityLines = 5

  /// `PRAGMA integrity_check` and `PRAGMA foreign_key_check`, read only.
  static func checkIntegrity(_ connection: Connection, into report: inout Diagnosis) {
    let path = connection.path
    do {
      let lines = try connection.prepare("PRAGMA integrity_check").rows { $0.text(0) }
      if lines == ["ok"] {
        report.add(.ok, .integrityOK, subject: path, "PRAGMA integrity_check: ok")
      } else {
        let quoted = lines.prefix(quotedIntegrityLines).joined(separator: "; ")
        report.add(
          .error, .integrityFailed, subject: path,
          "PRAGMA integrity_check reports \(lines.count) problem\(lines.count == 1 ? "" : "s"): \(quoted)",
          hint: TaskerError.damagedDatabase(path: path, reason: "").hint)
      }
    } catch {
      report.add(
        .error, .integrityFailed, subject: path, "PRAGMA integrity_check failed: \(error)",
        hint: TaskerError.damagedDatabase(path: path, reason: "").hint)
      return
    }
    do {
      // Rows: the child table, its rowid, the parent table, the key's index.
      let violations = try connection.prepare("PRAGMA foreign_key_check").rows { ($0.text(0), $0.text(2)) }
      if violations.isEmpty {
        report.add(.ok, .foreignKeysOK, subject: path, "PRAGMA foreign_key_check: no row refers to a missing one")
      } else {
        let pairs = Set(violations.map { "\($0.0) → \($0.1)" }).sorted().joined(separator: ", ")
        report.add(
          .error, .foreignKeyViolation, subject: path,
          "\(violations.count) row\(violations.count == 1 ? "" : "s") refer to missing rows (\(pairs))",
          hint: TaskerError.damagedDatabase(path: path, reason: "").hint)
      }
    } catch {
      report.add(.error, .integrityFailed, subject: path, "PRAGMA foreign_key_check failed: \(error)")
    }
  }
}

extension TaskStore {
  /// Step 3: the protection settings and the sealed and plain counts.
  func checkEncryption(into report: inout Diagnosis) {
    var census = EncryptionCensus()
    do {
      let settings = try protectionSettings()
      census.bodyEncryption = settings.bodyEncryption
      census.attachmentEncryption = settings.attachmentEncryption
    } catch let error as TaskerError {
      report.add(.warning, .protectionSettingsUnknown, error.description, hint: error.hint)
    } catch {
      report.add(.warning, .protectionSettingsUnknown, "\(error)")
    }
    switch census.bodyEncryption {
    case true?: report.add(.ok, .bodyEncryptionOn, "new notes and page bodies are sealed")
    case false?:
      report.add(
        .warning, .bodyEncryptionOff, "new notes and page bodies are stored plain",
        hint: "turn it on with 'tasker settings set encryption on'")
    case nil: break
    }
    switch census.attachmentEncryption {
    case true?: report.add(.ok, .attachmentEncryptionOn, "new attachment files are sealed")
    case false?:
      report.add(
        .info, .attachmentEncryptionOff, "new attachment files are stored plain (the default)",
        hint: "seal them with 'tasker settings set attachment-encryption on'")
    case nil: break
    }
    do {
      for body in BodyColumn.allCases {
        // Only the marker is needed, as keyUsage() reads it.
        try connection.prepare(
          "SELECT substr(\(body.column), 1, 64) FROM \(body.table) WHERE \(body.column) <> ''"
        ).each { row in
          let sealed = SealedValue.isSealed(row.text(0))
          switch (body, sealed) {
          case (.taskNotes, true): census.sealedNotes += 1
          case (.taskNotes, false): census.plainNotes += 1
          case (.pageBody, true): census.sealedPageBodies += 1
          case (.pageBody, false): census.plainPageBodies += 1
          }
          return true
        }
      }
    } catch {
      report.add(.error, .checkFailed, subject: "bodies", "cannot count sealed and plain bodies: \(error)")
    }
    let plain = census.plainNotes + census.plainPageBodies
    if plain > 0 {
      report.add(
        census.bodyEncryption == true ? .warning : .info, .plainBodiesStored,
        "\(census.plainNotes) note\(census.plainNotes == 1 ? "" : "s") and \(census.plainPageBodies) page "
          + "bod\(census.plainPageBodies == 1 ? "y" : "ies") are stored plain",
        hint: "seal them with 'tasker encrypt'")
    }
    // The attachment counts are added by checkAttachments, which reads each file's first bytes once.
    report.encryption = census
  }

  /// Step 4: the key ids in use.
  func checkKeys(into report: inout Diagnosis) {
    do {
      let usage = try keyUsage()
      report.keys = usage.keys
      let list = usage.keys.map {
        "\($0.keyID) (\($0.taskNotes) notes, \($0.pageBodies) page bodies, \($0.attachments) attachments, "
          + "\($0.approvalArguments) approval arguments)"
      }
      report.add(
        .info, .keysInUse,
        usage.keys.isEmpty ? "no stored value is sealed" : "sealed under \(list.joined(separator: ", "))")
      if usage.unreadable > 0 {
        report.add(
          .warning, .sealedValuesUnreadable,
          "\(usage.unreadable) sealed value\(usage.unreadable == 1 ? "" : "s") or attachment file"
            + "\(usage.unreadable == 1 ? "" : "s") name no key this build can read",
          hint: "retire no key until 'tasker keys --check' passes")
      }
    } catch {
      report.add(.error, .checkFailed, subject: "keys", "cannot count the keys in use: \(error)")
    }
  }

  /// Step 6: every row has its file, every file its row; and the
  /// attachment counts of the census, from each file's first bytes.
  func checkAttachments(into report: inout Diagnosis) {
    let before = report.findings.count
    let rows: [AttachmentRow]
    do {
      rows = try attachmentRows()
    } catch {
      report.add(.error, .checkFailed, subject: "attachments", "cannot read the attachment rows: \(error)")
      return
    }
    // The files of deleted records kept for undo are named too (GateLedger+KeptCopies.swift).
    var named = (try? keptAttachmentFileNames()) ?? []
    for row in rows {
      let record = "attachment/\(row.record.id)"
      do {
        let file = try row.location()
        named.insert(file.name)
        let path = attachmentsDirectory + "/" + file.name
        guard FileStatus.exists(path) else {
          report.add(
            .error, .attachmentFileMissing, subject: record, "its file '\(path)' does not exist",
            hint: "restore it from a backup, or remove the attachment with 'tasker attach remove'")
          continue
        }
        let header = AttachmentHeader(prefix: try files.prefix(of: path, count: Attachment.wrapperByteCount))
        try row.check(fileIsSealed: header.isSealed)
        if header.isSealed {
          report.encryption?.sealedAttachments += 1
        } else {
          report.encryption?.plainAttachments += 1
        }
      } catch let error as TaskerError {
        if case .attachmentRefused(_, let reason) = error {
          report.add(
            .error, .attachmentRowRefused, subject: record, "\(record) is refused: \(reason)", hint: error.hint)
        } else {
          report.add(.error, .checkFailed, subject: record, error.description, hint: error.hint)
        }
      } catch {
        report.add(.error, .checkFailed, subject: record, "\(error)")
      }
    }
    for name in Self.entries(of: attachmentsDirectory) where !named.contains(name) {
      report.add(
        .warning, .attachmentFileOrphan, subject: attachmentsDirectory + "/" + name,
        "no attachment row names this file (a leftover of an interrupted add or delete, or put there by hand)",
        hint: "remove it if you do not need it; doctor changes nothing")
    }
    if let census = report.encryption, census.plainAttachments > 0 {
      report.add(
        .info, .plainAttachmentsStored,
        "\(census.plainAttachments) attachment file\(census.plainAttachments == 1 ? " is" : "s are") stored plain")
    }
    if report.findings[before...].allSatisfy({ $0.code == .plainAttachmentsStored }) {
      report.add(
        .ok, .attachmentsConsistent,
        "\(rows.count) attachment\(rows.count == 1 ? "" : "s"), each with its file, and no file without a row")
    }
  }
}
