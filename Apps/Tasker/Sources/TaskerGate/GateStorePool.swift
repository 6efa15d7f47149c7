import TaskSystem
import TaskerCore

/// The SQLite connections the gate's calls run on, lent one call at a time,
/// so that calls on different threads never share a connection.
///
/// Each `TaskStore` is its own SQLite connection to the same WAL database:
/// readers run at once, writers take SQLite's write lock (BEGIN IMMEDIATE)
/// and wait for each other up to the store's busy timeout, so a budget is
/// still decided inside one write transaction whatever thread asks. A lease
/// takes an idle store or opens a new one; at most as many idle stores as
/// it started with are kept (the HTTP server's worker threads), the rest
/// are closed.
///
/// The pool's own write transactions also queue on one in-process lock
/// (`writing`) before they ask SQLite for its write lock: threads of one
/// gate then wait their turn on a lock that wakes them at once, not in
/// SQLite's busy handler, which sleeps up to 100 ms between tries. Other
/// processes still meet SQLite's busy timeout as before.
///
/// Thread-safe: the idle list is behind one lock held for a push or a pop,
/// never while a call runs.
public final class GateStorePool: @unchecked Sendable {
  private let open: () throws -> TaskStore
  private let keeping: Int
  private let mutex = ThreadLock()
  private let writer = ThreadLock()
  private var idle: [TaskStore]

  /// A pool of stores already open, that opens more on demand.
  ///
  /// - Parameters:
  ///   - stores: the stores lent first (one per server thread); as many
  ///     idle stores are kept open, at least 1.
  ///   - open: opens one more store of the same database when all are
  ///     lent; a failure is the failure of the call that asked for it.
  public init(stores: [TaskStore], open: @escaping () throws -> TaskStore) {
    self.idle = stores
    self.keeping = max(1, stores.count)
    self.open = open
  }

  /// A pool of one store, lent to every call: for one thread only (stdio,
  /// tests), where calls never overlap.
  ///
  /// - Parameter store: the store.
  public convenience init(single store: TaskStore) {
    self.init(stores: [store], open: { store })
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

  /// Runs `body`, a whole write transaction on a lent store, while no
  /// other thread of this pool runs one. Never nest it.
  ///
  /// - Parameter body: the transaction.
  /// - Returns: what `body` returns.
  /// - Throws: what `body` throws.
  public func writing<Result>(_ body: () throws -> Result) rethrows -> Result {
    writer.lock()
    defer { writer.unlock() }
    return try body()
  }
}
