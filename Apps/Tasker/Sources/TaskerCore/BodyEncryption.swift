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
  /// The largest batch `encryptBodies` commits at once.
  public static let maximumEncryptionBatch = 100_000

  /// Turns encryption on and seals every plain note and page body, in
  /// batches of `batchSize` rows, one transaction per batch.
  ///
  /// Safe to interrupt at any point: a batch is committed whole or not at
  /// all, a sealed body is never sealed again, so a second run picks up
  /// where the first stopped, and a run over a fully sealed database
  /// changes nothing. Every body ends plain or sealed, never lost or doubled.
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
    guard (1...Self.maximumEncryptionBatch).contains(batchSize) else {
      throw TaskerError.invalidValue(field: "batch size", reason: "must be 1 to \(Self.maximumEncryptionBatch)")
    }
    let keyring = try sealer.keyring()
    try setBodyEncryption(true)
    // Room for a whole batch of changed pages, so none spills to the log twice.
    try connection.execute("PRAGMA cache_size = -65536")
    var report = EncryptionReport()
    for body in BodyColumn.allCases {
      var after: Int64 = 0
      while true {
        let (last, batch) = try connection.transaction { () -> (Int64?, EncryptionReport) in
          try encryptBatch(body, after: after, limit: batchSize, keyring: keyring)
        }
        guard let last else { break }
        after = last
        report.sealed += batch.sealed
        report.alreadySealed += batch.alreadySealed
        report.empty += batch.empty
        report.batches += 1
        afterBatch(report)
      }
    }
    return report
  }

  /// Seals the plain bodies among the next `limit` rows after id `after`,
  /// inside the caller's transaction.
  private func encryptBatch(
    _ body: BodyColumn, after: Int64, limit: Int, keyring: Keyring
  ) throws -> (Int64?, EncryptionReport) {
    let rows = try connection.prepare(
      "SELECT id, \(body.column) FROM \(body.table) WHERE id > ? ORDER BY id LIMIT ?"
    ).rows([.integer(after), .integer(Int64(limit))]) { ($0.integer(0), $0.text(1)) }
    var report = EncryptionReport()
    let update = try connection.prepare("UPDATE \(body.table) SET \(body.column) = ? WHERE id = ?")
    for (id, value) in rows {
      if value.isEmpty {
        report.empty += 1
      } else if SealedValue.isSealed(value) {
        report.alreadySealed += 1
      } else {
        let context = body.context(id)
        let sealed: String
        do {
          sealed = try SealedValue.seal(value, using: keyring, context: context)
        } catch let error as TaskCryptoError {
          throw TaskerError.sealingFailed(record: context, cause: error)
        }
        try update.run([.text(sealed), .integer(id)])
        report.sealed += 1
      }
    }
    return (rows.last?.0, report)
  }

  /// Moves every sealed body to the keyring's primary key, in one
  /// transaction: either every body is under the primary key afterwards,
  /// or (when one does not open) nothing changed. Plain bodies are left
  /// alone; `encryptBodies` seals them.
  ///
  /// - Returns: what was done.
  /// - Throws: the key source's errors; `.sealedBodyUnreadable` naming the
  ///   first body that does not open (nothing was changed); `.database`.
  @discardableResult
  public func rewrapBodies() throws -> RewrapReport {
    let keyring = try sealer.keyring()
    var report = RewrapReport(primaryKeyID: keyring.primaryID.hex)
    try connection.transaction {
      for body in BodyColumn.allCases {
        let rows = try connection.prepare(
          "SELECT id, \(body.column) FROM \(body.table) WHERE \(body.column) <> '' ORDER BY id"
        ).rows { ($0.integer(0), $0.text(1)) }
        let update = try connection.prepare("UPDATE \(body.table) SET \(body.column) = ? WHERE id = ?")
        for (id, value) in rows {
          guard SealedValue.isSealed(value) else {
            report.plain += 1
            continue
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
            continue
          }
          try update.run([.text(result.value), .integer(id)])
          report.rewrapped += 1
        }
      }
    }
    return report
  }
}
