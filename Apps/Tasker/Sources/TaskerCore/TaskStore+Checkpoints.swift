import Dispatch
import Synchronization

extension TaskStore {
  /// Leaves the log's checkpoints to `checkpointLog()` on some connection:
  /// this store's commits no longer run SQLite's automatic checkpoint (a
  /// copy of the log into the database file and a sync, inside the write
  /// lock), so a server's calls never wait behind one. The log then grows
  /// until a checkpoint runs; whoever calls this must run them.
  ///
  /// - Throws: `TaskerError.database`.
  public func leaveCheckpointsToCaller() throws {
    try connection.stopAutomaticCheckpoints()
  }

  /// A passive checkpoint: copies the committed log into the database file
  /// and syncs it, without waiting for or blocking readers and writers;
  /// when the database is busy, nothing is done (the next one does it).
  /// A checkpoint never loses a committed change: the log keeps every
  /// frame not yet copied.
  ///
  /// - Throws: `TaskerError.database`.
  public func checkpointLog() throws {
    try connection.checkpointPassively()
  }
}

/// Passive checkpoints of one database's log on a thread and connection of
/// their own, so that copying a large transaction's log into the database
/// file and syncing it (tens of MiB after a first sync or a new device's
/// pull) overlaps the work that follows instead of holding up the commit
/// that made it. For a connection that leaves its checkpoints to the caller
/// (`TaskStore.leaveCheckpointsToCaller`).
///
/// A checkpoint never loses a committed change (the log keeps every frame
/// not yet copied), and SQLite lets one run beside the other connection's
/// reads and writes; a failed or busy one is left for the next. The caller
/// `finish`es before it closes its store: the worker then has no
/// checkpoint running and its connection is closed.
public final class BackgroundCheckpoints: @unchecked Sendable {
  private let databasePath: String
  private let queue = DispatchQueue(label: "tasker.background-checkpoints")
  private let running = DispatchGroup()
  /// Touched only on `queue`.
  private var connection: Connection?
  /// Whether a checkpoint is waiting to start.
  private let queued = Atomic<Bool>(false)
  /// Between `start` and `finish`: only then does `request` do anything.
  private let active = Atomic<Bool>(false)

  /// Checkpoints for the database at `databasePath`; opens nothing yet.
  public init(databasePath: String) {
    self.databasePath = databasePath
  }

  /// Lets `request` start checkpoints until `finish`.
  public func start() {
    active.store(true, ordering: .sequentiallyConsistent)
  }

  /// Starts a passive checkpoint of what is committed now, on the worker;
  /// returns at once. A request made while one is still waiting to start
  /// adds nothing (that one copies everything committed when it starts),
  /// and one made outside `start` … `finish` nothing at all.
  public func request() {
    guard active.load(ordering: .sequentiallyConsistent),
      queued.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
    else { return }
    queue.async(group: running) { [self] in
      queued.store(false, ordering: .sequentiallyConsistent)
      do {
        if connection == nil { connection = try Connection(path: databasePath, create: false) }
        try connection?.checkpointPassively()
      } catch {
        // The log keeps what was not copied; the caller's last checkpoint, or the next, copies it.
        connection = nil
      }
    }
  }

  /// Stops further requests, waits for every requested checkpoint, then
  /// closes the worker's connection.
  public func finish() {
    active.store(false, ordering: .sequentiallyConsistent)
    running.wait()
    queue.sync { connection = nil }
  }
}
