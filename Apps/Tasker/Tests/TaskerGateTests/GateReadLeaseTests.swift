import AssistantKeys
import CommandKit
import Foundation
import TaskCrypto
import TaskSystem
import TaskerCore
import TaskerTestSupport
import XCTest

@testable import TaskerGate

/// The read budget spent in blocks (`GateReadLeases`): reserved in the
/// key's tally before any read of the block runs, so no number of pools
/// (processes) admits more reads than the budget, and given back when
/// unspent, so the tally ends at the reads that ran.
final class GateReadLeaseTests: XCTestCase {
  private var directory: TemporaryDirectory!
  private var keyring: Keyring!
  private var store: TaskStore!
  private let now = Date(timeIntervalSince1970: 1_800_000_000)
  private let keyID = AssistantKeyID("tkid_00000000000000bb")!
  private let utc = Calendar.gregorianUTC

  override func setUpWithError() throws {
    directory = try TemporaryDirectory()
    (keyring, store) = try directory.newStore()
    _ = try store.addTask(TaskDraft(title: "one"))
  }

  /// A new connection to the test database, as another process opens it.
  private func connection() throws -> TaskStore {
    try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
  }

  /// A pool of the HTTP gate's shape (blocks up to 256 reads) on its own
  /// connections: what one `tasker mcp --http` process holds.
  private func process(threads: Int) throws -> GateStorePool {
    let path = directory.path("t.db")
    let keyring = self.keyring!
    return GateStorePool(stores: try (0..<threads).map { _ in try connection() }) {
      try TaskStore(databasePath: path, keys: keyring)
    }
  }

  private func toolbox(_ stores: GateStorePool) -> GateToolbox {
    let now = self.now
    return GateToolbox(
      stores: stores, identity: GateIdentity(keyID: keyID, name: "bot", trust: .standard, grants: [.tasksWrite]),
      clock: { now }, calendar: utc, vaultDirectory: nil)
  }

  /// The key's read tally for the test's day, read on the test's own connection.
  private func tallied() throws -> Int {
    try store.tallied(.read, keyID: keyID, since: Int64(utc.startOfDay(for: now).timeIntervalSince1970))
  }

  /// The window the test's clock is in.
  private var window: Int64 { GateWindow.start(of: now, calendar: utc) }

  /// Whether a call ran (true), or was refused with the read budget's
  /// error (false); any other outcome fails the test.
  private func read(_ gate: GateToolbox, _ tool: String = "list_tasks") -> Bool {
    let arguments: [String: JSONValue] = tool == "search_tasks" ? ["query": "one"] : [:]
    do {
      let result = try gate.callTool(name: tool, arguments: arguments)
      XCTAssertFalse(result.isError, "\(result.json)")
      return true
    } catch {
      XCTAssertEqual(error.code, MCPError.refusedCode)
      XCTAssertEqual(error.data?["budget"], "reads", error.message)
      return false
    }
  }

  /// Runs `body(pool, thread)` on `threads` threads for each pool at once,
  /// each thread with its own toolbox, and waits for all of them.
  private func race(_ pools: [GateStorePool], threads: Int, _ body: @escaping @Sendable (GateToolbox) -> Void) {
    let group = DispatchGroup()
    for pool in pools {
      for _ in 0..<threads {
        let gate = Lent(toolbox(pool))
        group.enter()
        Thread.detachNewThread {
          body(gate.value)
          group.leave()
        }
      }
    }
    group.wait()
  }

  // MARK: - Two processes, one budget

  func testTwoProcessesAdmitExactlyTheReadBudget() throws {
    try store.setGateSetting("read-budget." + keyID.text, "37")
    let pools = [try process(threads: 3), try process(threads: 3)]
    let admitted = Counter()
    let refused = Counter()
    // Each thread reads until it has been refused three times: a block
    // another thread of its pool still holds is then spent too.
    race(pools, threads: 3) { gate in
      var refusals = 0
      var tries = 0
      while refusals < 3, tries < 500 {
        tries += 1
        if self.read(gate) { admitted.add() } else { refusals += 1 }
      }
      refused.add(refusals)
    }
    XCTAssertEqual(admitted.value, 37, "exactly the budget, across both processes")
    XCTAssertEqual(refused.value, 6 * 3)
    XCTAssertEqual(try tallied(), 37, "every reserved read ran")
    for pool in pools { pool.giveBackAllReads() }
    XCTAssertEqual(try tallied(), 37)
  }

  func testGivingBackEveryUnspentReadLeavesTheReadsThatRan() throws {
    try store.setGateSetting("read-budget." + keyID.text, "10000")
    let pools = [try process(threads: 3), try process(threads: 3)]
    let admitted = Counter()
    race(pools, threads: 3) { gate in
      for _ in 0..<11 where self.read(gate) { admitted.add() }
    }
    XCTAssertEqual(admitted.value, 66)
    // 33 reads in a process reserve at least 8 + 16 + 16 of which some
    // were not spent: the tally counts them until they are given back.
    XCTAssertGreaterThan(try tallied(), 66, "blocks are reserved before their reads run")
    for pool in pools { pool.giveBackAllReads() }
    XCTAssertEqual(try tallied(), 66, "the tally is the reads that ran")
    for pool in pools { pool.giveBackAllReads() }
    XCTAssertEqual(try tallied(), 66, "nothing is given back twice")
  }

  // MARK: - Sweeps

  func testASweepGivesBackOnlyBlocksNotSpentFromSinceTheLastSweep() throws {
    let pool = try process(threads: 1)
    let gate = toolbox(pool)
    XCTAssertTrue(read(gate, "list_tasks"))
    XCTAssertTrue(read(gate, "search_tasks"))
    XCTAssertEqual(try tallied(), 16, "one block of 8 per tool")
    pool.giveBackIdleReads()
    XCTAssertEqual(try tallied(), 16, "both were spent from since the pool began")
    XCTAssertTrue(read(gate, "list_tasks"))
    pool.giveBackIdleReads()
    XCTAssertEqual(try tallied(), 16 - 7, "the idle search block's 7 reads are given back, the list block kept")
    pool.giveBackIdleReads()
    XCTAssertEqual(try tallied(), 3, "the list block idled for a sweep: its 6 reads are given back")
    // A given-back block is reserved again from the smallest size.
    XCTAssertTrue(read(gate, "search_tasks"))
    XCTAssertEqual(try tallied(), 3 + 8)
  }

  // MARK: - Block sizes

  func testBlocksDoubleFromEightToTwoHundredFiftySix() throws {
    try store.setGateSetting("read-budget." + keyID.text, "10000")
    let gate = toolbox(try process(threads: 1))
    var reservations: [Int] = []
    var before = try tallied()
    for _ in 0..<800 {
      XCTAssertTrue(read(gate))
      let after = try tallied()
      if after != before { reservations.append(after - before) }
      before = after
    }
    XCTAssertEqual(reservations, [8, 16, 32, 64, 128, 256, 256, 256])
  }

  func testABlockIsNeverLargerThanTheBudgetsRoom() throws {
    try store.setGateSetting("read-budget." + keyID.text, "100")
    let gate = toolbox(try process(threads: 1))
    var reservations: [Int] = []
    var before = try tallied()
    var admitted = 0
    for _ in 0..<120 {
      if read(gate) { admitted += 1 }
      let after = try tallied()
      XCTAssertLessThanOrEqual(after, 100)
      if after != before { reservations.append(after - before) }
      before = after
    }
    XCTAssertEqual(admitted, 100)
    XCTAssertEqual(reservations, [8, 16, 32, 44], "the fourth block wanted 64, the room was 44")
  }

  func testLeasesWantDoublingBlocksUpToTheirLargest() {
    let block = GateReadLeases.Block(keyID: keyID, tool: .listTasks, window: window)
    let leases = GateReadLeases(largest: GateReadLeases.serverLargest)
    var wanted: [Int] = []
    for _ in 0..<7 {
      wanted.append(leases.wanted(block))
      leases.hold(block, reserved: leases.wanted(block))
    }
    XCTAssertEqual(wanted, [8, 16, 32, 64, 128, 256, 256])
    // A block cut short by the room doubles from what was held before.
    let short = GateReadLeases(largest: GateReadLeases.serverLargest)
    short.hold(block, reserved: 3)
    XCTAssertEqual(short.wanted(block), 16)
    XCTAssertEqual((0..<3).filter { _ in short.spend(block) }.count, 2, "the caller spent the first read itself")
    let single = GateReadLeases(largest: 1)
    single.hold(block, reserved: 1)
    XCTAssertEqual(single.wanted(block), 1)
    XCTAssertFalse(single.spend(block))
  }

  func testAPoolOfOneStoreReservesOneReadPerCall() throws {
    let gate = GateToolbox(
      stores: GateStorePool(single: store),
      identity: GateIdentity(keyID: keyID, name: "bot", trust: .standard, grants: []), clock: { [now] in now },
      calendar: utc, vaultDirectory: nil)
    for calls in 1...20 {
      XCTAssertTrue(read(gate, calls.isMultiple(of: 2) ? "list_tasks" : "search_tasks"))
      XCTAssertEqual(try tallied(), calls, "no block is held")
    }
  }

  // MARK: - untallyReads

  func testUntallyingLowersOrDeletesAnOpenTallyAndNeverAFoldedOne() throws {
    let window = self.window
    try store.tally(.read, keyID: keyID, assistant: "bot", tool: .listTasks, window: window, calls: 10)
    XCTAssertTrue(try store.untallyReads(keyID: keyID, tool: .listTasks, window: window, calls: 3))
    XCTAssertEqual(try tallied(), 7)
    XCTAssertFalse(
      try store.untallyReads(keyID: keyID, tool: .listTasks, window: window, calls: 8), "more than counted")
    XCTAssertFalse(try store.untallyReads(keyID: keyID, tool: .searchTasks, window: window, calls: 1), "another tool")
    XCTAssertFalse(try store.untallyReads(keyID: keyID, tool: .listTasks, window: window - 3_600, calls: 1))
    XCTAssertFalse(try store.untallyReads(keyID: keyID, tool: .listTasks, window: window, calls: 0))
    XCTAssertEqual(try tallied(), 7)
    XCTAssertTrue(try store.untallyReads(keyID: keyID, tool: .listTasks, window: window, calls: 7))
    XCTAssertEqual(try tallied(), 0)
    XCTAssertFalse(try store.hasOpenTallies(), "a tally whose calls were all given back is deleted")
    // Counted up again from nothing, the row is a new one.
    try store.tally(.read, keyID: keyID, assistant: "bot", tool: .listTasks, window: window, calls: 5)
    XCTAssertEqual(try tallied(), 5)
    // Folded into a receipt, a tally is never lowered.
    try store.foldTallies(now: Int64(now.timeIntervalSince1970))
    XCTAssertFalse(try store.untallyReads(keyID: keyID, tool: .listTasks, window: window, calls: 2))
    XCTAssertFalse(try store.untallyReads(keyID: keyID, tool: .listTasks, window: window, calls: 5))
    XCTAssertEqual(try tallied(), 5)
    XCTAssertEqual(try store.receipts().first?.target, "reads/5")
  }
}

/// A value handed to one other thread, which alone uses it from then on.
private final class Lent<Value>: @unchecked Sendable {
  let value: Value

  init(_ value: Value) {
    self.value = value
  }
}

/// A count several threads add to.
final class Counter: @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0

  /// The count now.
  var value: Int {
    lock.lock()
    defer { lock.unlock() }
    return count
  }

  /// Adds `amount` (1 unless given).
  func add(_ amount: Int = 1) {
    lock.lock()
    count += amount
    lock.unlock()
  }
}
