import TaskCrypto

/// How many stored values one key id seals.
public struct KeyUsage: Sendable, Equatable, Codable {
  /// The key id, 8 lowercase hex digits.
  public var keyID: String
  /// Task notes sealed by it.
  public var taskNotes = 0
  /// Page bodies sealed by it.
  public var pageBodies = 0
  /// Attachment files sealed by it.
  public var attachments = 0
  /// Arguments of calls in the gate's approval queue sealed by it.
  public var approvalArguments = 0
}

/// One sealed value and where it lives, for `taskkey retire --input`.
public struct SealedRecord: Sendable, Equatable, Codable {
  /// The record and field, which is also the value's context: `task/7/notes`.
  public var record: String
  /// The stored value, `tc1.<kid>:…` (ciphertext only).
  public var value: String
}

/// The key ids the database uses, so that retiring a key can be checked
/// first.
public struct KeyUsageReport: Sendable, Equatable, Codable {
  /// Every key id in use, ordered by id.
  public var keys: [KeyUsage] = []
  /// Plain (not sealed) non-empty bodies.
  public var plainBodies = 0
  /// Sealed values of a format version this build cannot read, and
  /// attachments whose file cannot be read or whose row is refused: they
  /// might use any key, so no key should be retired while any remain.
  public var unreadable = 0
}

extension TaskStore {
  /// Counts, per key id, the bodies (and attachments) it seals. Reads only
  /// the markers of bodies, one row at a time, and the 13-byte wrappers of
  /// attachment files: needs no key, and memory does not grow with the
  /// number of bodies.
  ///
  /// - Throws: `TaskerError.database`.
  public func keyUsage() throws -> KeyUsageReport {
    var report = KeyUsageReport()
    var usage = [String: KeyUsage]()
    for body in BodyColumn.allCases {
      // Only the marker is needed: the first 13 characters, `tc1.<kid>:`.
      try connection.prepare(
        "SELECT substr(\(body.column), 1, 64) FROM \(body.table) WHERE \(body.column) <> ''"
      ).each { row in
        let keyID: KeyID?
        do {
          keyID = try SealedValue.keyID(of: row.text(0))
        } catch {
          report.unreadable += 1
          return true
        }
        guard let keyID else {
          report.plainBodies += 1
          return true
        }
        var entry = usage[keyID.hex] ?? KeyUsage(keyID: keyID.hex)
        if body == .taskNotes { entry.taskNotes += 1 } else { entry.pageBodies += 1 }
        usage[keyID.hex] = entry
        return true
      }
    }
    // Attachments: the key each file's wrapper carries, never the key_id column.
    let attachments = try attachmentKeyIDs()
    report.unreadable += attachments.unreadable
    for keyID in attachments.keys {
      var entry = usage[keyID.hex] ?? KeyUsage(keyID: keyID.hex)
      entry.attachments += 1
      usage[keyID.hex] = entry
    }
    try countApprovalArguments(into: &usage, report: &report)
    report.keys = usage.values.sorted { $0.keyID < $1.keyID }
    return report
  }

  /// Hands every sealed body with its record to `each`, in table and id
  /// order, one at a time as it is read (for `tasker keys --values`, which
  /// writes each line before reading the next), for `taskkey retire KID
  /// --input - --field value`, which refuses while any of them uses the key.
  ///
  /// - Throws: `TaskerError.database`, or what `each` throws.
  public func sealedRecords(_ each: (SealedRecord) throws -> Void) throws {
    for body in BodyColumn.allCases {
      try connection.prepare(
        "SELECT id, \(body.column) FROM \(body.table) WHERE \(body.column) <> '' ORDER BY id"
      ).each { row in
        let value = row.text(1)
        if SealedValue.isSealed(value) { try each(SealedRecord(record: body.context(row.integer(0)), value: value)) }
        return true
      }
    }
    for record in try approvalSealedRecords() { try each(record) }
  }
}
