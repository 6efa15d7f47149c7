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
  /// The idle stores, each with the answers remembered on it.
  private var idle: [GateReadMemo]
  /// The blocks of read budget this process reserved and has not spent.
  public let reads: GateReadLeases

  /// A pool of stores already open, that opens more on demand.
  ///
  /// - Parameters:
  ///   - stores: the stores lent first (one per server thread); as many
  ///     idle stores are kept open, at least 1.
  ///   - readBlocks: the largest block of reads reserved at once
  ///     (`GateReadLeases`); the HTTP gate's by default.
  ///   - open: opens one more store of the same database when all are
  ///     lent; a failure is the failure of the call that asked for it.
  public init(
    stores: [TaskStore], readBlocks: Int = GateReadLeases.serverLargest, open: @escaping () throws -> TaskStore
  ) {
    self.idle = stores.map(GateReadMemo.init(store:))
    self.keeping = max(1, stores.count)
    self.open = open
    self.reads = GateReadLeases(largest: readBlocks)
  }

  /// A pool of one store, lent to every call: for one thread only (stdio,
  /// tests), where calls never overlap. Every read is its own reservation.
  ///
  /// - Parameter store: the store.
  public convenience init(single store: TaskStore) {
    self.init(stores: [store], readBlocks: 1, open: { store })
  }

  /// Gives back the reads of blocks not spent from since the last call
  /// (the HTTP gate calls it on a timer), in one write transaction.
  public func giveBackIdleReads() { giveBack(reads.idleBlocks()) }

  /// Gives back every unspent read (before the process stops).
  public func giveBackAllReads() { giveBack(reads.allBlocks()) }

  /// Takes `unspent` back out of the tallies that counted them; a failure
  /// leaves them counted (the count errs high, never low).
  private func giveBack(_ unspent: [GateReadLeases.Unspent]) {
    guard !unspent.isEmpty else { return }
    try? lease { store in
      try writing {
        try store.inOneLightTransaction {
          for reads in unspent {
            try store.untallyReads(
              keyID: reads.block.keyID, tool: reads.block.tool, window: reads.block.window, calls: reads.reads)
          }
        }
      }
    }
  }

  /// Runs `body` with a store no other thread uses meanwhile (for a pool
  /// of one, the one store), then takes it back.
  ///
  /// - Parameter body: the call.
  /// - Returns: what `body` returns.
  /// - Throws: what opening a store throws (`TaskerError`), or what `body` throws.
  public func lease<Result>(_ body: (TaskStore) throws -> Result) throws -> Result {
    try lend { try body($0.store) }
  }

  /// Runs `body` with a store no other thread uses meanwhile and the
  /// answers remembered on it (which go and come back with the store), then
  /// takes them back.
  ///
  /// - Throws: what opening a store throws (`TaskerError`), or what `body` throws.
  func lend<Result>(_ body: (GateReadMemo) throws -> Result) throws -> Result {
    mutex.lock()
    let taken = idle.popLast()
    mutex.unlock()
    let lent = try taken ?? GateReadMemo(store: open())
    defer {
      mutex.lock()
      if idle.count < keeping, !idle.contains(where: { $0 === lent }) { idle.append(lent) }
      mutex.unlock()
    }
    return try body(lent)
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
