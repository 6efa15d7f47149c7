import TaskerCore

/// The answers of reading calls remembered on one connection of the gate's
/// pool, each kept with the connection's `TaskStore.ChangeStamp` and given
/// again only while the stamp is the same: while no connection, in this
/// process or another, committed a change. An answer given from here is
/// byte for byte the answer running the call would give.
///
/// Only answers without note text are remembered (`GateToolbox.memoKey`):
/// titles and planning fields, which the database holds in the clear, never
/// a note or anything opened with a key. At most `maximumEntries` answers
/// of at most `maximumBytes` each; when full, every answer is dropped.
///
/// Not thread-safe: used only by the call its connection is lent to.
final class GateReadMemo {
  /// The most answers kept per connection: 64.
  static let maximumEntries = 64
  /// The largest answer kept: 256 KiB of JSON.
  static let maximumBytes = 256 * 1024

  /// The connection the answers were read on; they are lent and kept
  /// together (`GateStorePool.lend`).
  let store: TaskStore
  private var answers: [String: (stamp: TaskStore.ChangeStamp, result: MCPToolResult)] = [:]

  init(store: TaskStore) {
    self.store = store
  }

  /// The answer remembered for `key` if the database is unchanged since,
  /// else `run()`'s, remembered unless it is an error or too large.
  ///
  /// - Throws: `TaskerError.database` (reading the stamp), or what `run` throws.
  func answer(_ key: String, run: () throws -> MCPToolResult) throws -> MCPToolResult {
    // Read before the call runs: a change committed while it runs moves
    // the next stamp, so this answer is never given after that change.
    let stamp = try store.changeStamp()
    if let kept = answers[key], kept.stamp == stamp { return kept.result }
    let result = try run()
    guard !result.isError, result.encoded.count <= Self.maximumBytes else { return result }
    if answers.count >= Self.maximumEntries { answers.removeAll(keepingCapacity: true) }
    answers[key] = (stamp, result)
    return result
  }
}
