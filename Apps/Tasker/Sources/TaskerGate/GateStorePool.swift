import TaskSystem
import TaskerCore

/// The SQLite connections the gate's calls run on, lent one call at a time,
/// so that calls on different threads never share a connection.
///
/// Each `TaskStore` is its own SQLite connection to the same WAL database:
/// readers run at once, writers take SQLite's write lock (BEGIN IMMEDIATE)
/// and wait for each other up to the store's busy timeout, so a budget is
/// still decided inside one write transaction whatever thread asks. A lease
/// takes an idle store or opens a new one; at most `keeping` idle stores
/// are kept (the HTTP server's worker threads), the rest are closed.
///
/// Thread-safe: the idle list is the only shared state, behind one lock
/// held for a push or a pop, never while a call runs.
public final class GateStorePool: @unchecked Sendable {
  private let open: () throws -> TaskStore
  private let keeping: Int
  private let mutex = ThreadLock()
  private var idle: [TaskStore]

  /// A pool that opens stores on demand.
  ///
  /// - Parameters:
  ///   - first: a store already open (the one that created or migrated the
  ///     database), lent first.
  ///   - keeping: the most idle stores kept open, at least 1.
  ///   - open: opens one more store of the same database; a failure is
  ///     the failure of the call that asked for it.
  public init(first: TaskStore, keeping: Int, open: @escaping () throws -> TaskStore) {
    self.idle = [first]
    self.keeping = max(1, keeping)
    self.open = open
  }

  /// A pool of one store, lent to every call: for one thread only (stdio,
  /// tests), where calls never overlap.
  ///
  /// - Parameter store: the store.
  public convenience init(single store: TaskStore) {
    self.init(first: store, keeping: 1, open: { store })
  }

  /// Runs `body` with a store no other thread uses meanwhile (for a pool
  /// of one, the one store), then takes it back.
  ///
  /// - Parameter body: the call.
  /// - Returns: what `body` returns.
  /// - Throws: what opening a store throws (`TaskerError`), or what `body` throws.
  public func lease<Result>(_ body: (TaskStore) throws -> Result) throws -> Result {
    mutex.lock()
    let taken = idle.popLast()
    mutex.unlock()
    let store = try taken ?? open()
    defer {
      mutex.lock()
      if idle.count < keeping, !idle.contains(where: { $0 === store }) { idle.append(store) }
      mutex.unlock()
    }
    return try body(store)
  }
}
