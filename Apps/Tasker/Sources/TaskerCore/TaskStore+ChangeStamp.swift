extension TaskStore {
  /// Where the database stood when a connection last looked: equal stamps
  /// of one connection mean no connection, in this process or another,
  /// committed a change in between, so a read made at the first still
  /// answers at the second (`changeStamp()`).
  public enum ChangeStamp: Equatable, Sendable {
    /// The WAL index's header (`Connection.walIndexHeader()`): every
    /// commit of any connection writes a new one.
    case logIndex([UInt8])
    /// `PRAGMA data_version` (which moves when another connection
    /// commits) and the rows this connection changed since it opened
    /// (which move with its own writes).
    case versions(others: Int64, own: Int64)
  }

  /// This connection's stamp now. In WAL mode, the header of the log's
  /// index, read from SQLite's mapping of it: a commit writes the log's
  /// pages, then a header with a new change counter, before it returns, so
  /// a header unchanged since an earlier look means no commit since; two
  /// copies compared, as SQLite's readers do, keep a header being written
  /// from being taken. While a header is being written, or without a WAL
  /// index, `PRAGMA data_version` and the connection's own count of
  /// changed rows (a read of the index under SQLite's lock). Stamps of the
  /// two kinds never compare equal; compare only stamps of the same
  /// `TaskStore`.
  ///
  /// - Throws: `TaskerError.database`.
  public func changeStamp() throws -> ChangeStamp {
    if let header = connection.walIndexHeader() { return .logIndex(header) }
    let version = try connection.prepare("PRAGMA data_version").first([]) { $0.integer(0) }
    return .versions(others: version ?? -1, own: connection.totalChanges)
  }
}
