import TaskCrypto

/// What `encryptBodies` did.
public struct EncryptionReport: Sendable, Equatable, Codable {
  /// Plain bodies sealed by this run.
  public var sealed = 0
  /// Bodies found sealed already (by an earlier run or an earlier write).
  public var alreadySealed = 0
  /// Empty bodies, left empty.
  public var empty = 0
  /// Transactions committed.
  public var batches = 0
  /// Whether the write-ahead log was checkpointed and truncated at the end,
  /// so no earlier (plain) version of a sealed body remains in the
  /// database file or `-wal`; false when another process's read
  /// transaction kept the log.
  public var logTruncated = false
}

/// What `rewrapBodies` did.
public struct RewrapReport: Sendable, Equatable, Codable {
  /// Bodies moved to the primary key.
  public var rewrapped = 0
  /// Sealed bodies already under the primary key.
  public var current = 0
  /// Plain bodies, left alone.
  public var plain = 0
  /// The primary key id that seals everything now.
  public var primaryKeyID: String = ""
  /// Sealed attachment files moved to the primary key (`rewrapAttachments`).
  public var attachmentsRewrapped = 0
  /// Transactions committed.
  public var batches = 0
  /// Whether the write-ahead log was checkpointed and truncated at the end,
  /// so no body under an older key remains in the database file or
  /// `-wal`; false when another process's read transaction kept the log.
  public var logTruncated = false
  /// Queued calls' arguments moved to the primary key (`rewrapApprovalArguments`).
  public var approvalArgumentsRewrapped = 0
}

/// The two tables that hold sealed bodies, and how each names its context.
enum BodyColumn: CaseIterable {
  case taskNotes
  case pageBody

  var table: String { self == .taskNotes ? "tasks" : "pages" }
  var column: String { self == .taskNotes ? "notes" : "body" }
  func context(_ id: Int64) -> String {
    self == .taskNotes ? BodyContext.notes(ofTask: id) : BodyContext.body(ofPage: id)
  }
}

extension TaskStore {
  /// The most rows `encryptBodies` or `rewrapBodies` commits at once.
  public static let maximumEncryptionBatch = 100_000

  /// A batch also ends once it holds this many bytes of stored bodies
  /// (4 MiB, always at least one row), so memory stays bounded whatever
  /// the size of the bodies.
  static let batchByteBudget = 4 << 20

  /// SQLite's page cache for a batch run: room for a whole batch of changed
  /// pages (a 4 MiB batch seals to about 5.5 MiB), so none spills to the
  /// log twice, and small enough to keep the process under 64 MiB.
  static let batchCacheKiB = 16_384

  /// Turns encryption on and seals every plain note and page body, in
  /// batches of at most `batchSize` rows and about 4 MiB of bodies, one
  /// transaction per batch, holding one batch in memory at a time.
  ///
  /// Safe to interrupt at any point: a batch is committed whole or not at
  /// all, a sealed body is never sealed again, so a second run picks up
  /// where the first stopped, and a run over a fully sealed database
  /// changes nothing. Every body ends plain or sealed, never lost or doubled.
  /// At the end the log is checkpointed and truncated (`logTruncated`).
  ///
  /// - Parameters:
  ///   - batchSize: rows per transaction, 1 to `maximumEncryptionBatch`.
  ///   - afterBatch: called after each commit with the running report.
  /// - Returns: what was done.
  /// - Throws: `TaskerError.invalidValue` for a bad batch size; the key
  ///   source's errors before anything is written; `.sealingFailed`,
  ///   `.database` (the batch in progress is rolled back).
  @discardableResult
  public func encryptBodies(
    batchSize: Int = 5000, afterBatch: (EncryptionReport) -> Void = { _ in }
  ) throws -> EncryptionReport {
    try Self.check(batchSize: batchSize)
    _ = try sealer.keyring()
    // Confirmed current in each batch's transaction (the first row it seals), reset after the commit.
    var keyring: Keyring?
    try setBodyEncryption(true)
    var report = EncryptionReport()
    for body in BodyColumn.allCases {
      try inBatches(body, limit: batchSize) { id, value in
        if value.isEmpty {
          report.empty += 1
          return nil
        }
        if SealedValue.isSealed(value) {
          report.alreadySealed += 1
          return nil
        }
        let context = body.context(id)
        let current = try keyring ?? sealer.currentKeyring()
        keyring = current
        do {
          let sealed = try SealedValue.seal(value, using: current, context: context)
          report.sealed += 1
          return sealed
        } catch let error as TaskCryptoError {
          throw TaskerError.sealingFailed(record: context, cause: error)
        }
      } afterBatch: {
        keyring = nil
        report.batches += 1
        afterBatch(report)
      }
    }
    report.sealed += try encryptApprovalArguments()
    report.logTruncated = try connection.truncateLog()
    return report
  }

  /// Moves every sealed body to the keyring's primary key, in batches of
  /// at most `batchSize` rows and about 4 MiB of bodies, one transaction
  /// per batch, holding one batch in memory at a time. Plain bodies are
  /// left alone; `encryptBodies` seals them.
  ///
  /// Safe to interrupt at any point, like `encryptBodies`: a batch is
  /// committed whole or not at all, and a body already under the primary
  /// key is left as it is, so a second run finishes the work. A body that
  /// does not open stops the run: its batch is rolled back whole, the
  /// batches before it stay committed (under the primary key, which the
  /// same keyring opens). At the end the log is checkpointed and truncated
  /// (`logTruncated`).
  ///
  /// - Parameters:
  ///   - batchSize: rows per transaction, 1 to `maximumEncryptionBatch`.
  ///   - afterBatch: called after each commit with the running report.
  /// - Returns: what was done.
  /// - Throws: `TaskerError.invalidValue` for a bad batch size; the key
  ///   source's errors before anything is written; `.sealedBodyUnreadable`
  ///   naming the first body that does not open; `.database`.
  @discardableResult
  public func rewrapBodies(
    batchSize: Int = 5000, afterBatch: (RewrapReport) -> Void = { _ in }
  ) throws -> RewrapReport {
    try Self.check(batchSize: batchSize)
    let keyring = try sealer.keyring()
    var report = RewrapReport(primaryKeyID: keyring.primaryID.hex)
    for body in BodyColumn.allCases {
      try inBatches(body, limit: batchSize) { id, value in
        guard !value.isEmpty else { return nil }
        guard SealedValue.isSealed(value) else {
          report.plain += 1
          return nil
        }
        let context = body.context(id)
        let result: (value: String, changed: Bool)
        do {
          result = try SealedValue.reseal(value, using: keyring, context: context)
        } catch let error as TaskCryptoError {
          throw TaskerError.sealedBodyUnreadable(record: context, cause: error)
        }
        guard result.changed else {
          report.current += 1
          return nil
        }
        report.rewrapped += 1
        return result.value
      } afterBatch: {
        report.batches += 1
        afterBatch(report)
      }
    }
    report.logTruncated = try connection.truncateLog()
    return report
  }

  /// Whether the last checkpoint found another process reading and left
  /// the log in place: earlier versions of the changed pages (plain text
  /// an edit replaced, bodies under an older key) then stay in the
  /// database file (the reader's snapshot still needs them) or in
  /// `tasker.db-wal`, until a later checkpoint completes, or the last
  /// connection that writes closes and SQLite checkpoints and removes the log.
  public var logKeptByReader: Bool { connection.logKeptByReader }

  static func check(batchSize: Int) throws {
    guard (1...maximumEncryptionBatch).contains(batchSize) else {
      throw TaskerError.invalidValue(field: "batch size", reason: "must be 1 to \(maximumEncryptionBatch)")
    }
  }

  /// Passes every row of `body`'s table to `change` in id order, in
  /// batches of at most `limit` rows and `batchByteBudget` bytes, one
  /// transaction each; a value `change` returns replaces the row's body.
  /// Reading resumes after the last id of the batch before, so only one
  /// batch is ever in memory.
  private func inBatches(
    _ body: BodyColumn, limit: Int, _ change: (_ id: Int64, _ stored: String) throws -> String?,
    afterBatch: () -> Void
  ) throws {
    try connection.execute("PRAGMA cache_size = -\(Self.batchCacheKiB)")
    // The first batch starts at the smallest id there can be (a row a
    // database writer gave a negative id is covered too), the others after
    // the last id of the batch before.
    let first = try connection.prepare("SELECT id, \(body.column) FROM \(body.table) WHERE id >= ? ORDER BY id")
    let next = try connection.prepare("SELECT id, \(body.column) FROM \(body.table) WHERE id > ? ORDER BY id")
    let update = try connection.prepare("UPDATE \(body.table) SET \(body.column) = ? WHERE id = ?")
    var after: Int64?
    while true {
      let last = try connection.transaction { () -> Int64? in
        var rows = [(id: Int64, stored: String)]()
        var bytes = 0
        try (after == nil ? first : next).each([.integer(after ?? .min)]) { row in
          let stored = row.text(1)
          rows.append((row.integer(0), stored))
          bytes += stored.utf8.count
          return rows.count < limit && bytes < Self.batchByteBudget
        }
        for (id, stored) in rows {
          if let changed = try change(id, stored) { try update.run([.text(changed), .integer(id)]) }
        }
        return rows.last?.id
      }
      guard let last else { return }
      after = last
      afterBatch()
    }
  }
}
