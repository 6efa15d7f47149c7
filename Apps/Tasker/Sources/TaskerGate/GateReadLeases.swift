import AssistantKeys
import TaskSystem
import TaskerCore

/// Reads an assistant's key may still run in this process without a write
/// transaction each: blocks of its read budget, reserved durably in
/// `gate_tallies` by one write transaction and then spent in memory.
///
/// A block is counted in the key's tally when it is reserved, before any
/// of its reads runs, so the day's count every gate reads already holds
/// it: no number of processes or servers admits more reads than the
/// budget. What a process did not spend it gives back (`giveBack`): when
/// the block sat idle for a sweep, and for a key's closed windows at its
/// next reservation. A process that dies before giving back leaves its
/// unspent blocks counted (at most `largest` reads per key and tool): the
/// count errs high, never low (SECURITY.md 8.6).
///
/// A block doubles each time the last one was spent before a sweep, from
/// `smallest` up to `largest`, and is never larger than what the budget
/// has left. With `largest` 1 (stdio, one session a process) every read
/// is its own reservation, as without leases.
///
/// Thread-safe: every method holds one lock for a few dictionary steps.
public final class GateReadLeases: @unchecked Sendable {
  /// Which block: one key's reads of one tool in one window.
  public struct Block: Hashable, Sendable {
    /// The key.
    public let keyID: AssistantKeyID
    /// The reading tool.
    public let tool: GateTool
    /// The window's start (`GateWindow.start`).
    public let window: Int64
  }

  /// Reads reserved and not yet spent, to give back.
  public struct Unspent: Equatable, Sendable {
    /// The block they were reserved in.
    public let block: Block
    /// How many.
    public let reads: Int
  }

  private struct Held {
    var left = 0
    var next: Int
    var spentSinceSweep = false
  }

  /// The first block's size: 8 reads.
  public static let smallest = 8
  /// The HTTP gate's largest block: 256 reads.
  public static let serverLargest = 256
  /// The largest block this process reserves.
  public let largest: Int
  private var held: [Block: Held] = [:]
  private let mutex = ThreadLock()

  /// Leases whose blocks never pass `largest` reads (at least 1).
  ///
  /// - Parameter largest: 1 for a gate of one session (stdio), else
  ///   `serverLargest`.
  public init(largest: Int) {
    self.largest = max(1, largest)
  }

  /// Spends one held read of `block`, if one is left.
  ///
  /// - Returns: true when a read was spent (the call may run).
  public func spend(_ block: Block) -> Bool {
    mutex.lock()
    defer { mutex.unlock() }
    guard var lease = held[block], lease.left > 0 else { return false }
    lease.left -= 1
    lease.spentSinceSweep = true
    held[block] = lease
    return true
  }

  /// How many reads the next reservation of `block` asks for, before the
  /// budget's room bounds it.
  public func wanted(_ block: Block) -> Int {
    mutex.lock()
    defer { mutex.unlock() }
    return min(largest, held[block]?.next ?? Self.smallest)
  }

  /// Holds the reads of a committed reservation of `block` but the one
  /// its caller spends now; the next block is twice as large.
  ///
  /// - Parameter reserved: the reads the transaction counted, at least 1.
  public func hold(_ block: Block, reserved: Int) {
    guard largest > 1 else { return }
    mutex.lock()
    defer { mutex.unlock() }
    var lease = held[block] ?? Held(next: Self.smallest)
    lease.left += max(0, reserved - 1)
    lease.next = min(largest, max(lease.next, reserved) * 2)
    lease.spentSinceSweep = true
    held[block] = lease
  }

  /// Takes back the unspent reads of one key's blocks in windows other
  /// than `window` (closed ones), for its caller to give back.
  public func closedBlocks(of keyID: AssistantKeyID, besides window: Int64) -> [Unspent] {
    take { $0.keyID == keyID && $0.window != window }
  }

  /// Takes back the unspent reads of every block not spent from since the
  /// last sweep, and starts a new sweep period for the others.
  public func idleBlocks() -> [Unspent] {
    mutex.lock()
    var idle: [Unspent] = []
    for (block, lease) in held {
      if lease.spentSinceSweep {
        held[block]?.spentSinceSweep = false
      } else {
        held[block] = nil
        if lease.left > 0 { idle.append(Unspent(block: block, reads: lease.left)) }
      }
    }
    mutex.unlock()
    return idle
  }

  /// Takes back every unspent read (the process is about to stop).
  public func allBlocks() -> [Unspent] { take { _ in true } }

  private func take(_ chosen: (Block) -> Bool) -> [Unspent] {
    mutex.lock()
    defer { mutex.unlock() }
    var taken: [Unspent] = []
    for (block, lease) in held where chosen(block) {
      held[block] = nil
      if lease.left > 0 { taken.append(Unspent(block: block, reads: lease.left)) }
    }
    return taken
  }
}
