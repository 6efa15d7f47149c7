extension TaskStore {
  /// Where the database stood when a connection last looked: equal stamps
  /// of one connection mean no connection, in this process or another,
  /// committed a change in between, so a read made at the first still
  /// answers at the second (`changeStamp()`).
  public struct ChangeStamp: Equatable, Sendable {
    /// `PRAGMA data_version`: moves when another connection commits.
    let othersVersion: Int64
    /// The rows this connection changed since it opened: moves with its own writes.
    let ownChanges: Int64
  }

  /// This connection's stamp now: one `PRAGMA data_version` (a read of the
  /// log's index, no table) and a counter in memory. Compare only stamps of
  /// the same `TaskStore`.
  ///
  /// - Throws: `TaskerError.database`.
  public func changeStamp() throws -> ChangeStamp {
    let version = try connection.prepare("PRAGMA data_version").first([]) { $0.integer(0) }
    return ChangeStamp(othersVersion: version ?? -1, ownChanges: connection.totalChanges)
  }
}
