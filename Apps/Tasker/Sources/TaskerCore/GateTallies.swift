import AssistantKeys
import FoundationEssentials

/// What a tally of `gate_tallies` counts: an assistant's reading calls, or
/// its refusals past the per-key limit of single refusal receipts. Each
/// open tally becomes one receipt when its window closes
/// (docs/formats/receipt.md, *Aggregated receipts*).
public enum GateTallyKind: String, CaseIterable, Sendable {
  /// Reading calls: folded into a `read` receipt, target `reads/<N>`.
  case read
  /// Refusals past the limit: folded into `refuse:rate-limited`, target
  /// `refusals/<N>`.
  case refused

  /// The decision of the receipt a tally of this kind becomes.
  public var decision: ReceiptDecision {
    switch self {
    case .read: return .read
    case .refused: return .refuse(.rateLimited)
    }
  }

  /// The target's prefix, before the count.
  public var targetPrefix: String {
    switch self {
    case .read: return "reads/"
    case .refused: return "refusals/"
    }
  }
}

/// The windows tallies are kept in: one hour, counted from the start of
/// the user's day (local midnight), so a window never spans two days and
/// the day's reads are the sum of its windows.
public enum GateWindow {
  /// A window's length: 3,600 seconds.
  public static let seconds: Int64 = 3_600

  /// The start of the window `now` is in, seconds since 1970.
  ///
  /// - Parameters:
  ///   - now: the time.
  ///   - calendar: the calendar with the user's time zone.
  public static func start(of now: Date, calendar: Calendar) -> Int64 {
    let day = Int64(calendar.startOfDay(for: now).timeIntervalSince1970)
    let offset = max(0, Int64(now.timeIntervalSince1970) - day)
    return day + offset / seconds * seconds
  }
}

extension TaskStore {
  /// The tallies of schema 8: one open row (`receipt` NULL) per kind, key,
  /// tool and window, counted up by one upsert a call; folded rows name
  /// their receipt and are purged after two days.
  static var talliesTable: String {
    """
    CREATE TABLE gate_tallies (
      id INTEGER PRIMARY KEY,
      kind TEXT NOT NULL CHECK (kind IN (\(sqlWords(GateTallyKind.allCases.map(\.rawValue))))),
      key_id TEXT NOT NULL CHECK (typeof(key_id) = 'text'
        AND key_id GLOB 'tkid_\(String(repeating: "[0-9a-f]", count: 16))'),
      assistant TEXT NOT NULL CHECK (typeof(assistant) = 'text' AND length(assistant) BETWEEN 1 AND 64),
      tool TEXT NOT NULL CHECK (tool IN (\(sqlWords(GateTool.receiptTools.map(\.rawValue))))),
      window INTEGER NOT NULL CHECK (typeof(window) = 'integer' AND window >= 0),
      calls INTEGER NOT NULL CHECK (typeof(calls) = 'integer' AND calls >= 1),
      receipt INTEGER REFERENCES gate_receipts (id)
    );
    CREATE UNIQUE INDEX gate_tallies_open ON gate_tallies (kind, key_id, tool, window) WHERE receipt IS NULL;
    CREATE INDEX gate_tallies_key ON gate_tallies (key_id, kind, window);
    """
  }

  /// Counts `calls` calls (one, or a block of reads reserved before they
  /// run) into the open tally of their kind, key, tool and window: one
  /// prepared upsert. Call it inside the write transaction that decided
  /// the calls.
  ///
  /// - Throws: `TaskerError.database`.
  public func tally(
    _ kind: GateTallyKind, keyID: AssistantKeyID, assistant: String, tool: GateTool, window: Int64, calls: Int = 1
  ) throws {
    try connection.prepare(
      """
      INSERT INTO gate_tallies (kind, key_id, assistant, tool, window, calls) VALUES (?, ?, ?, ?, ?, ?6)
      ON CONFLICT (kind, key_id, tool, window) WHERE receipt IS NULL DO UPDATE SET calls = calls + ?6
      """
    ).run([
      .text(kind.rawValue), .text(keyID.text), .text(assistant), .text(tool.rawValue), .integer(window),
      .integer(Int64(max(1, calls))),
    ])
  }

  /// Takes `calls` reserved and unspent reads back out of the open read
  /// tally of a key, tool and window (`GateReadLeases`): the tally is
  /// lowered, or removed when they were all it counted. A tally already
  /// folded into a receipt, or counting fewer, is left as it is: the count
  /// then errs high, never low.
  ///
  /// - Returns: whether a tally took them back.
  /// - Throws: `TaskerError.database`.
  @discardableResult
  public func untallyReads(keyID: AssistantKeyID, tool: GateTool, window: Int64, calls: Int) throws -> Bool {
    guard calls > 0 else { return false }
    let values: [SQLValue] = [
      .text(GateTallyKind.read.rawValue), .text(keyID.text), .text(tool.rawValue), .integer(window),
      .integer(Int64(calls)),
    ]
    let open = "kind = ?1 AND key_id = ?2 AND tool = ?3 AND window = ?4 AND receipt IS NULL"
    try connection.prepare("UPDATE gate_tallies SET calls = calls - ?5 WHERE \(open) AND calls > ?5").run(values)
    if connection.changes > 0 { return true }
    try connection.prepare("DELETE FROM gate_tallies WHERE \(open) AND calls = ?5").run(values)
    return connection.changes > 0
  }

  /// The calls of `kind` a key was tallied for in windows starting at or
  /// after `since`, folded or not: what the read budget counts.
  ///
  /// - Throws: `TaskerError.database`.
  public func tallied(_ kind: GateTallyKind, keyID: AssistantKeyID, since: Int64) throws -> Int {
    let count = try connection.prepare(
      "SELECT coalesce(sum(calls), 0) FROM gate_tallies WHERE key_id = ? AND kind = ? AND window >= ?"
    ).first([.text(keyID.text), .text(kind.rawValue), .integer(since)]) { $0.integer(0) }
    return Int(count ?? 0)
  }

  /// The current window of refusal tallies: on the store's clock, the
  /// one receipts are stamped with (read tallies use the gate's clock).
  public static func refusalWindow(calendar: Calendar) -> Int64 {
    GateWindow.start(of: Date(timeIntervalSince1970: Double(now())), calendar: calendar)
  }

  /// Which open tallies a fold takes: those of one key whose window ends
  /// before the current one of its kind, or every open tally.
  public struct TallyCut: Sendable {
    /// The key; nil for every key.
    public var keyID: AssistantKeyID?
    /// The current read window and refusal window, nil for no bound.
    public var windows: (reads: Int64, refusals: Int64)?

    /// Every open tally, the current windows' too.
    public static let all = TallyCut(keyID: nil, windows: nil)

    /// The closed windows of one key.
    public static func closed(of keyID: AssistantKeyID, reads: Int64, refusals: Int64) -> TallyCut {
      TallyCut(keyID: keyID, windows: (reads, refusals))
    }

    var clause: String {
      "receipt IS NULL AND (?1 IS NULL OR key_id = ?1) AND (?2 IS NULL OR window < CASE kind WHEN ?3 THEN ?2 ELSE ?4 END)"
    }

    var values: [SQLValue] {
      [
        keyID.map { .text($0.text) } ?? .null, windows.map { .integer($0.reads) } ?? .null,
        .text(GateTallyKind.read.rawValue), windows.map { .integer($0.refusals) } ?? .null,
      ]
    }
  }

  /// Whether any open tally (not yet a receipt) is in `cut`.
  ///
  /// - Throws: `TaskerError.database`.
  public func hasOpenTallies(_ cut: TallyCut = .all) throws -> Bool {
    try connection.prepare("SELECT EXISTS (SELECT 1 FROM gate_tallies WHERE \(cut.clause))").first(cut.values) {
      $0.integer(0)
    } == 1
  }

  /// Folds open tallies into receipts, oldest window first: each becomes
  /// one chained receipt (`read` with `reads/<N>`, or
  /// `refuse:rate-limited` with `refusals/<N>`), and the tally names it.
  /// Folded tallies older than two days are purged.
  ///
  /// - Parameters:
  ///   - cut: which open tallies (`TallyCut.all`: every one).
  ///   - now: the time, for the purge.
  /// - Returns: the receipts written.
  /// - Throws: `TaskerError.damagedDatabase` or `.receiptInvalid` for a
  ///   tally whose values no receipt can hold (nothing is written), `.database`.
  @discardableResult
  public func foldTallies(_ cut: TallyCut = .all, now: Int64) throws -> [GateReceipt] {
    try connection.transaction {
      let open = try connection.prepare(
        "SELECT id, kind, key_id, assistant, tool, window, calls FROM gate_tallies WHERE \(cut.clause) ORDER BY window, id"
      ).rows(cut.values) { row in
        (row.integer(0), row.text(1), row.text(2), row.text(3), row.text(4), row.integer(5), row.integer(6))
      }
      var written = [GateReceipt]()
      for (id, kindWord, keyWord, assistant, toolWord, start, calls) in open {
        guard let kind = GateTallyKind(rawValue: kindWord), let key = AssistantKeyID(keyWord),
          let tool = GateTool(rawValue: toolWord)
        else {
          throw TaskerError.damagedDatabase(
            path: connection.path, reason: "gate tally \(id) holds a word no Tasker writes")
        }
        let noun = kind == .read ? "calls" : "refusals"
        let receipt = GateReceipt(
          actor: .assistant, keyID: key, assistant: assistant, tool: tool, decision: kind.decision,
          target: kind.targetPrefix + String(calls),
          summary: "\(calls) \(tool.rawValue) \(noun) in the window from \(start) to \(start + GateWindow.seconds)")
        try receipt.check(rules: 4...9)
        let stored = try appendReceipt(receipt)
        try connection.prepare("UPDATE gate_tallies SET receipt = ? WHERE id = ?").run([
          .integer(stored.id), .integer(id),
        ])
        written.append(stored)
      }
      try connection.prepare("DELETE FROM gate_tallies WHERE receipt IS NOT NULL AND window < ?").run([
        .integer(now - 2 * 86_400)
      ])
      return written
    }
  }
}

extension TaskStore {
  /// The most single refusal receipts one key leaves in one window: 20.
  /// Past it, its refusals are tallied into one `refuse:rate-limited`
  /// receipt per tool and window.
  public static let refusalReceiptLimit = 20

  /// Records a refusal of an assistant's call: its own receipt while the
  /// key has fewer than `refusalReceiptLimit` refusal receipts in the
  /// current window (an hour from the start of the day in `calendar`,
  /// read on the store's clock, the one receipts are stamped with), else
  /// one count in the key's open `refused` tally for the tool and window.
  /// Call it inside the write transaction that decided the refusal, so no
  /// number of processes passes the limit.
  ///
  /// - Parameters:
  ///   - receipt: the refusal's receipt, of an assistant.
  ///   - calendar: the calendar with the user's time zone.
  /// - Returns: the receipt written, or nil when it was tallied.
  /// - Throws: `TaskerError.database`.
  @discardableResult
  public func recordRefusal(_ receipt: GateReceipt, calendar: Calendar) throws -> GateReceipt? {
    guard let keyID = receipt.keyID, let assistant = receipt.assistant else { return try appendReceipt(receipt) }
    let window = Self.refusalWindow(calendar: calendar)
    return try connection.transaction {
      // The refusal word's prefix is bound: no decision word in the SQL.
      let prefix = GateDecisionKind.refuse.rawValue + ":"
      let count = try connection.prepare(
        "SELECT count(*) FROM gate_receipts WHERE key_id = ? AND at >= ? AND substr(decision, 1, ?) = ?"
      ).first([.text(keyID.text), .integer(window), .integer(Int64(prefix.count)), .text(prefix)]) { $0.integer(0) }
      guard (count ?? 0) >= Self.refusalReceiptLimit else { return try appendReceipt(receipt) }
      try tally(.refused, keyID: keyID, assistant: assistant, tool: receipt.tool, window: window)
      return nil
    }
  }
}

extension TaskStore {
  /// Runs `body` in one write transaction whose commit does not wait for
  /// the disk (`synchronous = NORMAL` for it alone, then FULL again): for
  /// a read's admission, whose only write is its tally. In WAL mode the
  /// commit is still atomic and ordered; a power cut may lose the last
  /// tallies written since the last synced commit (reads counted a little
  /// low), never a receipt: every other transaction still syncs, and its
  /// sync makes the earlier tallies durable too. A process that dies loses
  /// nothing (the log is written before the commit returns).
  ///
  /// - Throws: what `body` throws (nothing is written), `TaskerError.database`.
  public func inOneLightTransaction<Result>(_ body: () throws -> Result) throws -> Result {
    try connection.execute("PRAGMA synchronous = NORMAL")
    let result: Result
    do {
      result = try connection.transaction(body)
    } catch {
      try connection.execute("PRAGMA synchronous = FULL")
      throw error
    }
    try connection.execute("PRAGMA synchronous = FULL")
    return result
  }
}
