import CommandKit
import FoundationEssentials
import TaskCrypto

/// The hash chain over receipts (docs/formats/receipt.md, *The chain*):
/// receipt n's `chain` is SHA-256 of the previous receipt's chain (32 zero
/// bytes for the first) followed by receipt n's canonical bytes. A writer
/// of the database who edits, reorders, inserts or deletes a receipt
/// breaks every link from there on; the head (`ReceiptHead`) anchors the
/// end of the chain outside the database.
public enum ReceiptChain {
  /// The chain value before the first receipt: 32 zero bytes.
  public static let genesis = [UInt8](repeating: 0, count: SHA256.byteCount)

  /// The chain value of `receipt` after `previous`.
  ///
  /// - Parameters:
  ///   - previous: the previous receipt's chain, or `genesis`.
  ///   - receipt: the receipt, with its id and time.
  /// - Returns: SHA-256(previous ‖ canonical bytes), 32 bytes.
  public static func link(previous: [UInt8], _ receipt: GateReceipt) -> [UInt8] {
    var hasher = SHA256()
    hasher.update(data: previous)
    hasher.update(data: receipt.canonicalBytes)
    return hasher.finalize().bytes
  }
}

extension GateReceipt {
  /// The receipt format's version, the `version` member of each receipt: 1.
  public static let formatVersion: Int64 = 1

  /// The receipt's JSON object of receipt.md: the 14 members, every one
  /// present, absent values `null`. `GateReceiptFormat.json(_:)` prints it.
  public var jsonObject: JSONValue {
    func optional(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
    return [
      "version": .integer(Self.formatVersion), "receipt": .string("r\(id)"), "id": .integer(id), "at": .integer(at),
      "actor": .string(actor.rawValue), "key_id": optional(keyID?.text), "assistant": optional(assistant),
      "tool": .string(tool.rawValue), "decision": .string(decision.rawValue), "target": .string(target),
      "summary": .string(summary), "undo": optional(undo?.rawValue), "undoes": optional(undoes.map { "r\($0)" }),
      "approval": approval.map { .integer($0) } ?? .null,
    ]
  }

  /// The receipt's canonical bytes: `jsonObject` in CommandKit's canonical
  /// encoding (UTF-8, keys sorted by their bytes, no white space, integers
  /// in shortest decimal, strings by the project's one escaper: `"` `\` as
  /// `\"` `\\`; `\b \t \n \f \r`; other bytes below 0x20 as `\u00xx` in
  /// lowercase hex; everything else as its UTF-8 bytes).
  public var canonicalBytes: [UInt8] { jsonObject.encoded }
}

/// The outcome of verifying the receipts, from a closed set (receipt.md,
/// *Verifying*; the vectors' `result`).
public enum ReceiptChainOutcome: String, Sendable, CaseIterable {
  /// Every link holds, and the head (if any) verifies and is on the chain.
  case intact
  /// A row has no chain value, or one that is not 64 lowercase hex digits.
  case missingChain = "missing_chain"
  /// A row's values break a rule of receipt.md or have the wrong type.
  case receiptInvalid = "receipt_invalid"
  /// A stored chain is not SHA-256(previous chain ‖ canonical bytes): that
  /// row, or one before it, was edited, removed, inserted or moved.
  case chainMismatch = "chain_mismatch"
  /// `receipts.head` is not the one line of the format.
  case headMalformed = "head_malformed"
  /// The head's code does not verify under the vault's head key (or the
  /// key is gone while a head exists).
  case headForged = "head_forged"
  /// The head names a receipt that is not in the database (the tail was
  /// cut back past it) or whose chain differs.
  case headNotOnChain = "head_not_on_chain"
  /// The head could not be checked: the vault is locked.
  case headUnchecked = "head_unchecked"

  /// Whether the outcome proves the receipts were altered.
  public var isTampered: Bool { self != .intact && self != .headUnchecked }
}

/// One receipt row as the verifier reads it: the receipt (or why it could
/// not be read) and its stored chain value.
public struct ReceiptChainRow: Sendable {
  /// The row's id.
  public var id: Int64
  /// The receipt, or the reason it breaks receipt.md.
  public var receipt: Result<GateReceipt, TaskerError>
  /// The stored chain (nil when absent or not 64 lowercase hex digits).
  public var chain: [UInt8]?

  /// A row.
  public init(id: Int64, receipt: Result<GateReceipt, TaskerError>, chain: [UInt8]?) {
    self.id = id
    self.receipt = receipt
    self.chain = chain
  }
}

/// What `tasker receipts --verify` reports.
public struct ReceiptChainReport: Sendable, Equatable {
  /// The outcome.
  public var outcome: ReceiptChainOutcome
  /// The receipt the outcome concerns (the first broken link, or the
  /// head's id), nil when intact.
  public var brokenID: Int64?
  /// A sentence for people, nil when intact.
  public var detail: String?
  /// How many receipts were read.
  public var count: Int
  /// The newest receipt of the intact chain, nil when there is none.
  public var lastID: Int64?
  /// The head's receipt, nil without a head.
  public var headID: Int64?
  /// Receipts after the head, not yet anchored (all of them without a head).
  public var unanchored: Int

  /// The report for a home without a database: nothing to verify.
  public static let empty = ReceiptChainReport(
    outcome: .intact, brokenID: nil, detail: nil, count: 0, lastID: nil, headID: nil, unanchored: 0)

  /// Verifies rows (in id order) and a head, as receipt.md says: the chain
  /// from the first row, then the head's code, then that the head's id and
  /// chain are on the chain.
  ///
  /// - Parameters:
  ///   - rows: every receipt row, in id order.
  ///   - head: the bytes of `receipts.head`, or nil when there is none.
  ///   - key: the head key, nil when the vault holds none; a thrown
  ///     `TaskerError.vaultLocked` from it gives `head_unchecked`.
  /// - Returns: the report.
  public static func verify(
    rows: [ReceiptChainRow], head: [UInt8]?, key: () throws -> SymmetricKey?
  ) rethrows -> ReceiptChainReport {
    var report = empty
    report.count = rows.count
    var previous = ReceiptChain.genesis
    var links = [Int64: [UInt8]]()
    func broken(_ outcome: ReceiptChainOutcome, _ id: Int64?, _ detail: String) -> ReceiptChainReport {
      report.outcome = outcome
      report.brokenID = id
      report.detail = detail
      return report
    }
    for row in rows {
      let receipt: GateReceipt
      switch row.receipt {
      case .failure(let error): return broken(.receiptInvalid, row.id, error.description)
      case .success(let read): receipt = read
      }
      guard let stored = row.chain else { return broken(.missingChain, row.id, "r\(row.id) has no chain value") }
      guard ConstantTime.equals(ReceiptChain.link(previous: previous, receipt), stored) else {
        return broken(
          .chainMismatch, row.id,
          "r\(row.id)'s chain is not SHA-256 of the previous chain and its bytes: it, or a receipt before it, "
            + "was edited, removed, inserted or moved")
      }
      previous = stored
      links[row.id] = stored
      report.lastID = row.id
    }
    report.unanchored = rows.count
    guard let head else { return report }
    guard let parsed = ReceiptHead.parse(head) else {
      return broken(.headMalformed, nil, "receipts.head is not one line of the head format")
    }
    report.headID = parsed.id
    let headKey: SymmetricKey?
    do {
      headKey = try key()
    } catch TaskerError.vaultLocked {
      return broken(.headUnchecked, parsed.id, "the vault is locked: run 'taskkey unlock' to check the head")
    }
    guard let headKey, parsed.isAuthentic(under: headKey) else {
      return broken(.headForged, parsed.id, "receipts.head does not verify under the vault's head key")
    }
    guard let onChain = links[parsed.id], ConstantTime.equals(onChain, parsed.chain) else {
      return broken(
        .headNotOnChain, parsed.id,
        "the head anchors r\(parsed.id), which is \(links[parsed.id] == nil ? "not in the database" : "not as anchored")"
          + ": receipts were removed or rewritten")
    }
    report.unanchored = rows.filter { $0.id > parsed.id }.count
    return report
  }
}

extension TaskStore {
  /// The chain value of the newest receipt, or `ReceiptChain.genesis`
  /// when there is none; a newest row without one gives nil.
  func newestChain() throws -> [UInt8]? {
    let newest = try connection.prepare("SELECT chain FROM gate_receipts ORDER BY id DESC LIMIT 1").first {
      $0.optionalChain(0)
    }
    guard let newest else { return ReceiptChain.genesis }
    return newest
  }

  /// Every receipt row in id order, read for the verifier (a row that
  /// breaks receipt.md is kept, with why).
  ///
  /// - Throws: `TaskerError.database`.
  public func receiptChainRows() throws -> [ReceiptChainRow] {
    try connection.prepare(
      "SELECT \(Self.receiptColumns), \(Self.receiptTypes), chain FROM gate_receipts ORDER BY id"
    ).rows([]) { row in
      let id = row.integer(0)
      let chain = row.optionalChain(13)
      guard row.integer(12) == 1 else {
        return ReceiptChainRow(
          id: id, receipt: .failure(.receiptInvalid(id: id, reason: "a column holds a value of the wrong type")),
          chain: chain)
      }
      do {
        return ReceiptChainRow(id: id, receipt: .success(try Self.receipt(row)), chain: chain)
      } catch let error as TaskerError {
        return ReceiptChainRow(id: id, receipt: .failure(error), chain: chain)
      }
    }
  }

  /// Verifies the chain from the first receipt, and the head in the home
  /// under the vault's head key (`tasker receipts --verify`).
  ///
  /// - Returns: the report; a broken link or head is an outcome, not an error.
  /// - Throws: `TaskerError.database`, `.system` (the head file is not
  ///   owner-only or unreadable), the vault's errors other than locked.
  public func verifyReceipts() throws -> ReceiptChainReport {
    try verifiedReceipts().report
  }

  /// The rows read and the report of verifying them with the head.
  private func verifiedReceipts() throws -> (rows: [ReceiptChainRow], report: ReceiptChainReport) {
    let rows = try receiptChainRows()
    let head = try receiptHeadBytes()
    let report = try ReceiptChainReport.verify(rows: rows, head: head) {
      try receiptHeadKeys?.receiptHeadKey(create: false)
    }
    return (rows, report)
  }

  /// Verifies the receipts as `verifyReceipts()` does and refuses when
  /// the verifier calls them tampered (`ReceiptChainOutcome.isTampered`);
  /// a head left unchecked by a locked vault passes, since the chain
  /// itself held. A first broken link that is a row breaking receipt.md
  /// is refused with that row's own error, as every read of it is.
  /// `undo(receipt:)` calls it before it trusts any receipt.
  ///
  /// - Throws: `TaskerError.receiptInvalid` (`receipt_invalid`),
  ///   `.receiptsTampered` naming the outcome and the first broken link
  ///   (every other tampered outcome), the errors of `verifyReceipts()`.
  func requireIntactReceipts() throws {
    let (rows, report) = try verifiedReceipts()
    guard report.outcome.isTampered else { return }
    if report.outcome == .receiptInvalid, let row = rows.first(where: { $0.id == report.brokenID }),
      case .failure(let error) = row.receipt
    {
      throw error
    }
    throw TaskerError.receiptsTampered(outcome: report.outcome, receipt: report.brokenID, detail: report.detail ?? "")
  }

  /// Version 7 of the schema: a `chain` column. The update trigger is
  /// dropped here and made again by `chainExistingReceipts`, which fills
  /// the column in id order. The column has no CHECK: SQLite checks every
  /// row's constraints when a column with one is added, so a row written
  /// with the checks off would stop the migration; the verifier reads any
  /// value that is not 64 lowercase hex digits as a broken link instead.
  static let chainMigration = """
    DROP TRIGGER gate_receipts_append_only_update;
    ALTER TABLE gate_receipts ADD COLUMN chain TEXT;
    """

  /// Chains every receipt in id order (version 7's migration), stopping
  /// at the first row that breaks receipt.md (it and every later row keep
  /// NULL, which `--verify` reports), then makes the update trigger again.
  static func chainExistingReceipts(_ connection: Connection) throws {
    let rows = try connection.prepare(
      "SELECT \(receiptColumns), \(receiptTypes) FROM gate_receipts ORDER BY id"
    ).rows([]) { row -> GateReceipt? in
      guard row.integer(12) == 1 else { return nil }
      return try? receipt(row)
    }
    var previous = ReceiptChain.genesis
    let update = try connection.prepare("UPDATE gate_receipts SET chain = ? WHERE id = ?")
    for case let receipt? in rows.prefix(while: { $0 != nil }) {
      previous = ReceiptChain.link(previous: previous, receipt)
      try update.run([.text(previous.lowercaseHex), .integer(receipt.id)])
    }
    try connection.execute(
      """
      CREATE TRIGGER gate_receipts_append_only_update BEFORE UPDATE ON gate_receipts
      BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
      """)
  }
}
