/// What a request to a planning provider was for.
public enum ProviderCallKind: String, Sendable, CaseIterable {
  /// `tasker plan`.
  case plan
  /// `tasker ask`.
  case ask
  /// `tasker provider test`: no task data.
  case test
}

/// How a request to a planning provider ended, as the provider log names it.
public enum ProviderCallOutcome: String, Sendable, CaseIterable {
  /// HTTP 200 and an answer that passed every check.
  case ok
  /// HTTP 401 or 403: the provider refused the key.
  case keyRejected = "key_rejected"
  /// HTTP 429: the provider is rate limiting.
  case rateLimited = "rate_limited"
  /// Any other status that is not 200.
  case providerFailed = "provider_failed"
  /// HTTP 200, but the answer broke a rule and was refused.
  case answerRefused = "answer_refused"
  /// No connection could be made.
  case unreachable
  /// The connection or the exchange ran past its limit.
  case timedOut = "timed_out"
  /// The TLS handshake or the certificate check failed.
  case tlsFailed = "tls_failed"
  /// The provider answered with a redirect, which is not followed.
  case redirectRefused = "redirect_refused"
  /// The answer was larger than the cap and was stopped.
  case tooLarge = "too_large"
  /// Any other failure of the exchange.
  case transport
}

/// One line of the provider log: a request that left this device (or
/// was attempted), with what it cost and how it ended. No task data, no
/// question and no key is kept.
public struct ProviderCall: Sendable, Equatable {
  /// When, in whole seconds since 1970.
  public let at: Int64
  /// The provider's name.
  public let provider: String
  /// Where the request went: `scheme://host[:port]`.
  public let origin: String
  /// What the request was for.
  public let kind: ProviderCallKind
  /// How many tasks the request described (0 for a test).
  public let candidates: Int
  /// HTTP bytes sent (request head and body).
  public let bytesSent: Int
  /// HTTP bytes received (every header line and the body).
  public let bytesReceived: Int
  /// The HTTP status of the final response, or nil when none came.
  public let status: Int?
  /// How it ended.
  public let outcome: ProviderCallOutcome

  /// A log line from its fields.
  public init(
    at: Int64, provider: String, origin: String, kind: ProviderCallKind, candidates: Int, bytesSent: Int,
    bytesReceived: Int, status: Int?, outcome: ProviderCallOutcome
  ) {
    self.at = at
    self.provider = provider
    self.origin = origin
    self.kind = kind
    self.candidates = candidates
    self.bytesSent = bytesSent
    self.bytesReceived = bytesReceived
    self.status = status
    self.outcome = outcome
  }
}

/// What `applyPlanOrder` did: the tasks it ordered and the ones it left,
/// because they were done or deleted since the plan was made.
public struct AppliedPlan: Sendable, Equatable {
  /// The tasks now holding `plan_order` 1, 2, …, in that order.
  public let ordered: [Int64]
  /// The planned tasks that are no longer open (or no longer exist).
  public let skipped: [Int64]
}

extension TaskStore {
  /// Version 6 of the schema: a task's place in the applied plan, and the
  /// log of requests to planning providers (docs/formats/plan-request.md).
  /// The listing index is made again with `plan_order` last, so `list`
  /// still reads the index alone and never the pages that hold notes.
  static let planningMigration = """
    ALTER TABLE tasks ADD COLUMN plan_order INTEGER CHECK (plan_order IS NULL OR plan_order >= 1);
    DROP INDEX tasks_listing;
    CREATE INDEX tasks_listing ON tasks (
      due IS NULL, due, id, status, title, estimate_minutes, priority, energy, contexts, plan_order
    );
    CREATE TABLE provider_log (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      at INTEGER NOT NULL,
      provider TEXT NOT NULL,
      origin TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('plan', 'ask', 'test')),
      candidates INTEGER NOT NULL CHECK (candidates >= 0),
      bytes_sent INTEGER NOT NULL CHECK (bytes_sent >= 0),
      bytes_received INTEGER NOT NULL CHECK (bytes_received >= 0),
      status INTEGER CHECK (status IS NULL OR status BETWEEN 100 AND 999),
      outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'key_rejected', 'rate_limited', 'provider_failed',
        'answer_refused', 'unreachable', 'timed_out', 'tls_failed', 'redirect_refused', 'too_large', 'transport'))
    );
    """

  /// Sets the plan order: task `taskIDs[0]` gets `plan_order` 1, the next
  /// 2, and so on; every other task's order is cleared. One transaction;
  /// no other field of any task changes.
  ///
  /// - Parameter taskIDs: the planned tasks, best first, each once.
  /// - Returns: the tasks ordered and those skipped (no longer open).
  /// - Throws: `TaskerError.invalidValue` when an id repeats (nothing is
  ///   changed), `.database`.
  public func applyPlanOrder(_ taskIDs: [Int64]) throws -> AppliedPlan {
    guard Set(taskIDs).count == taskIDs.count else {
      throw TaskerError.invalidValue(field: "plan", reason: "a task appears twice in the plan")
    }
    return try connection.transaction {
      try connection.execute("UPDATE tasks SET plan_order = NULL WHERE plan_order IS NOT NULL")
      let update = try connection.prepare("UPDATE tasks SET plan_order = ? WHERE id = ? AND status = 'open'")
      var ordered: [Int64] = []
      var skipped: [Int64] = []
      for id in taskIDs {
        try update.run([.integer(Int64(ordered.count + 1)), .integer(id)])
        if connection.changes == 1 { ordered.append(id) } else { skipped.append(id) }
      }
      return AppliedPlan(ordered: ordered, skipped: skipped)
    }
  }

  /// The task's place in the applied plan, or nil when it has none.
  ///
  /// - Throws: `TaskerError.notFound`, `.database`.
  public func planOrder(ofTask id: Int64) throws -> Int? {
    guard
      let order = try connection.prepare("SELECT plan_order FROM tasks WHERE id = ?").first(
        [.integer(id)], { $0.optionalInteger(0) })
    else { throw TaskerError.notFound(kind: .task, id: id) }
    return order.map { Int($0) }
  }

  /// Appends `call` to the provider log.
  ///
  /// - Throws: `TaskerError.database`.
  public func recordProviderCall(_ call: ProviderCall) throws {
    try connection.transaction {
      try connection.prepare(
        """
        INSERT INTO provider_log (at, provider, origin, kind, candidates, bytes_sent, bytes_received, status, outcome)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
      ).run([
        .integer(call.at), .text(call.provider), .text(call.origin), .text(call.kind.rawValue),
        .integer(Int64(call.candidates)), .integer(Int64(call.bytesSent)), .integer(Int64(call.bytesReceived)),
        call.status.map { .integer(Int64($0)) } ?? .null, .text(call.outcome.rawValue),
      ])
    }
  }

  /// The newest `limit` lines of the provider log, newest first.
  ///
  /// - Throws: `TaskerError.damagedDatabase` for a row whose kind or
  ///   outcome no Tasker writes, `.database`.
  public func providerCalls(limit: Int) throws -> [ProviderCall] {
    try connection.prepare(
      """
      SELECT at, provider, origin, kind, candidates, bytes_sent, bytes_received, status, outcome
      FROM provider_log ORDER BY id DESC LIMIT ?
      """
    ).rows([.integer(Int64(max(0, limit)))]) { row -> ProviderCall in
      guard let kind = ProviderCallKind(rawValue: row.text(3)), let outcome = ProviderCallOutcome(rawValue: row.text(8))
      else {
        throw TaskerError.damagedDatabase(
          path: connection.path, reason: "a provider log row names no known kind or outcome")
      }
      return ProviderCall(
        at: row.integer(0), provider: row.text(1), origin: row.text(2), kind: kind, candidates: Int(row.integer(4)),
        bytesSent: Int(row.integer(5)), bytesReceived: Int(row.integer(6)),
        status: row.optionalInteger(7).map { Int($0) },
        outcome: outcome)
    }
  }
}
