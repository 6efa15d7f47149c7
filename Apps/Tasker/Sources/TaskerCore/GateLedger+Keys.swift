import TaskCrypto

/// The approval queue's sealed arguments (`approval/<id>/arguments`) in
/// every command that handles keys: `tasker encrypt` seals plain ones,
/// `tasker rewrap` moves them to the primary key, `tasker keys` (and its
/// `--check`) counts them and `tasker keys --values` lists them for
/// `taskkey retire`, so that retiring a key never strands a queued call.
/// The gate stores no other sealed value: receipts and settings are plain.
extension TaskStore {
  /// Seals every plain, non-empty approval argument, in one transaction,
  /// under the current primary key (confirmed inside it).
  ///
  /// - Returns: how many were sealed.
  /// - Throws: the key source's errors, `.sealingFailed`, `.database`
  ///   (nothing is changed then).
  @discardableResult
  public func encryptApprovalArguments() throws -> Int {
    try connection.transaction {
      let plain = try approvalArguments().filter { !SealedValue.isSealed($0.1) }
      guard !plain.isEmpty else { return 0 }
      let keyring = try sealer.currentKeyring()
      let update = try connection.prepare("UPDATE gate_approvals SET arguments = ? WHERE id = ?")
      for (id, value) in plain {
        try update.run([.text(try sealer.seal(value, context: Self.approvalContext(id), using: keyring)), .integer(id)])
      }
      return plain.count
    }
  }

  /// Moves every sealed approval argument (queued or, from older
  /// databases, decided) to the primary key, in one transaction that holds
  /// the write lock: either all are under the primary key afterwards, or
  /// (when one does not open) none changed.
  ///
  /// - Returns: how many were re-sealed.
  /// - Throws: the key source's errors; `.sealedBodyUnreadable` naming the
  ///   first that does not open (deny that approval, which drops its
  ///   arguments, then run rewrap again); `.database`.
  @discardableResult
  public func rewrapApprovalArguments() throws -> Int {
    try connection.transaction {
      let keyring = try sealer.currentKeyring()
      var moved = 0
      let update = try connection.prepare("UPDATE gate_approvals SET arguments = ? WHERE id = ?")
      for (id, value) in try approvalArguments() where SealedValue.isSealed(value) {
        let context = Self.approvalContext(id)
        let result: (value: String, changed: Bool)
        do {
          result = try SealedValue.reseal(value, using: keyring, context: context)
        } catch let error as TaskCryptoError {
          throw TaskerError.sealedBodyUnreadable(record: context, cause: error)
        }
        guard result.changed else { continue }
        try update.run([.text(result.value), .integer(id)])
        moved += 1
      }
      return moved
    }
  }

  /// Adds the approval arguments to a key-usage count: per key id, and
  /// the plain and unreadable ones. Reads only the markers: needs no key.
  ///
  /// - Throws: `TaskerError.database`.
  func countApprovalArguments(into usage: inout [String: KeyUsage], report: inout KeyUsageReport) throws {
    // The marker is the first 13 characters, `tc1.<kid>:`.
    let markers = try connection.prepare(
      "SELECT substr(arguments, 1, 64) FROM gate_approvals WHERE arguments <> ''"
    ).rows { $0.text(0) }
    for marker in markers {
      let found: KeyID?
      do {
        found = try SealedValue.keyID(of: marker)
      } catch {
        report.unreadable += 1
        continue
      }
      guard let keyID = found else {
        report.plainBodies += 1
        continue
      }
      usage[keyID.hex, default: KeyUsage(keyID: keyID.hex)].approvalArguments += 1
    }
  }

  /// Every sealed approval argument with its record, for
  /// `taskkey retire KID --input - --field value`.
  ///
  /// - Throws: `TaskerError.database`.
  public func approvalSealedRecords() throws -> [SealedRecord] {
    try approvalArguments().filter { SealedValue.isSealed($0.1) }.map {
      SealedRecord(record: Self.approvalContext($0.0), value: $0.1)
    }
  }

  /// The non-empty stored arguments by approval id (few: one per queued call).
  private func approvalArguments() throws -> [(Int64, String)] {
    try connection.prepare("SELECT id, arguments FROM gate_approvals WHERE arguments <> '' ORDER BY id")
      .rows { ($0.integer(0), $0.text(1)) }
  }
}
