import AssistantKeys
import Foundation
import TaskCrypto
import TaskVault

/// Verify and the vault at scale (issue 14 goals 4 and 5). Each size gets
/// a vault of its own (fast test KDF: these goals time reads, not the
/// passphrase KDF), filled in one write by the fixtures (Fixtures.swift).
enum ScaleBench {
  /// Registry sizes: from 10 keys to the registry's limit (10^6, left
  /// out under `--quick`).
  static func keyCounts(quick: Bool) -> [Int] {
    [10, 10_000, 100_000] + (quick ? [] : [AssistantKeyRegistry.maximumKeyCount])
  }
  /// Vault items: the per-store limit, in one store.
  static let itemCount = VaultLimits.maximumItemCount

  /// A new unlocked vault in `name` under the scratch directory; returns
  /// its directory, with `TASKKEY_HOME` pointing at it.
  static func freshVault(_ scratch: Scratch, _ name: String) throws -> String {
    let home = scratch.path(name)
    setenv("TASKKEY_HOME", home, 1)
    _ = try run([scratch.taskkey, "init", "--kdf", "fast-test-only", "--passphrase-file", scratch.path("passphrase")])
    _ = try run([scratch.taskkey, "unlock", "--passphrase-file", scratch.path("passphrase")])
    return home
  }

  /// Goal 4: a warm verify (one registry instance, its file unchanged)
  /// under 10 µs and flat from 10 keys to the limit; a cold `taskkey
  /// verify` process at most 2.5x an empty Swift main, and flat. Every
  /// key of the registry has a last-used slot, marked used an hour ago
  /// (so the first verify writes one slot, the next are coalesced);
  /// `--last-used v1` writes the version-1 file instead, to measure the
  /// whole-file cost it had.
  static func verifyRows(scratch: Scratch, emptyMain: String, quick: Bool, lastUsedVersion1: Bool) throws -> [Row] {
    defer { setenv("TASKKEY_HOME", scratch.path("home"), 1) }
    let home = try freshVault(scratch, "registry-home")
    let registry = try AssistantKeyRegistry(vault: try Vault(at: home))
    let rounds = quick ? 7 : 15
    var rows = [Row]()
    var warm = [Double]()
    var cold = [Double]()
    let keyCounts = keyCounts(quick: quick)
    // One real key (a benchmark key, not a secret: kept as a String like a
    // server's header); the rest are fillers with random digests, added in
    // one write per size by the fixtures (Fixtures.swift).
    let real = try registry.mint(name: "bench-real")
    let presented = real.key.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    var filled = 1
    var writes = [Row]()
    for count in keyCounts {
      // The largest size is reached by one `mint` (timed below) after the
      // fillers, as a full registry refuses a mint.
      let isLargest = count == keyCounts.last!
      try registry.addFillerKeys(count: count - filled - (isLargest ? 1 : 0), prefix: "bench\(filled)")
      filled = count
      if isLargest {
        writes.append(try timedWrite("mint (one new key)", count, home: home) { _ = try $0.mint(name: "bench-new") })
      }
      try registry.markEveryKeyUsed(at: Int64(Date().timeIntervalSince1970) - 3_600, version1: lastUsedVersion1)
      // Warm: a new instance (as a server holds one), loaded once.
      let server = try AssistantKeyRegistry(vault: try Vault(at: home))
      _ = try server.verify(presented)
      let calls = 20_000
      let times = try (0..<rounds).map { _ in
        Double(try nanoseconds { for _ in 0..<calls { _ = try server.verify(presented) } }) / Double(calls)
      }.sorted()
      warm.append(times[times.count / 2])
      rows.append(
        Row(
          name: "verify, warm (one registry instance)", size: "\(count) keys",
          measured: String(format: "%.2f µs/call", times[times.count / 2] / 1e3),
          spread: String(format: "%.2f-%.2f µs", times.first! / 1e3, times.last! / 1e3), goal: "< 10 µs",
          met: times[times.count / 2] < 10_000))
      // Cold: a whole `taskkey verify` process, paired with an empty main.
      let keyFile = scratch.path("verify-\(count).key")
      guard
        FileManager.default.createFile(
          atPath: keyFile, contents: Data((presented + "\n").utf8), attributes: [.posixPermissions: 0o600])
      else { throw BenchError.failed("cannot write \(keyFile)") }
      let perRound = 5
      func mean(_ arguments: [String], input: String?) throws -> UInt64 {
        var total: UInt64 = 0
        for _ in 0..<perRound { total += try run(arguments, input: input).0 }
        return total / UInt64(perRound)
      }
      let result = try pairedRounds(
        rounds: quick ? 9 : 21, ours: { try mean([scratch.taskkey, "verify"], input: keyFile) },
        baselines: [{ try mean([emptyMain], input: nil) }])
      let milliseconds = Double(result.ours.sorted()[result.ours.count / 2]) / 1e6
      cold.append(result.ratios[0].median)
      rows.append(
        Row(
          name: "taskkey verify, cold / empty Swift main (dynamic runtime)",
          size: "\(count) keys, all used\(lastUsedVersion1 ? " (last-used v1)" : "")",
          measured: String(format: "%.2f ms, %.2fx", milliseconds, result.ratios[0].median),
          spread: result.ratios[0].spread, goal: "<= 2.50x", met: result.ratios[0].median <= 2.5))
    }
    writes.append(try timedWrite("revoke (one key)", keyCounts.last!, home: home) { try $0.revoke(real.key.id) })
    rows += writes
    let range = "\(keyCounts.first!)-\(keyCounts.last!) keys"
    rows.append(
      Row(
        name: "verify, warm, flat: largest / smallest registry", size: range,
        measured: String(format: "%.2fx", warm.last! / warm.first!), spread: "-", goal: "<= 1.50x",
        met: warm.last! / warm.first! <= 1.5))
    rows.append(
      Row(
        name: "taskkey verify, cold, flat: largest / smallest registry", size: range,
        measured: String(format: "%.2fx", cold.last! / cold.first!), spread: "-", goal: "<= 1.25x",
        met: cold.last! / cold.first! <= 1.25))
    rows.append(
      Row(
        name: "registry cap", size: "-", measured: "\(AssistantKeyRegistry.maximumKeyCount) keys", spread: "-",
        goal: ">= 10^6 or justified (SECURITY.md)", met: nil))
    return rows
  }

  /// One write at `count` keys by a new instance (as a new process opens
  /// the registry): the whole file read and checked, every record re-MACed
  /// under the next generation, written and synced; CPU time of this thread.
  static func timedWrite(
    _ name: String, _ count: Int, home: String, _ body: (AssistantKeyRegistry) throws -> Void
  ) throws -> Row {
    let elapsed = try nanoseconds { try body(try AssistantKeyRegistry(vault: try Vault(at: home))) }
    let path = home + "/device-only/" + AssistantKeyRegistry.FileName.registry
    let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
    return Row(
      name: "\(name), a new instance, CPU time", size: "\(count) keys",
      measured: String(format: "%.2f s, file %.0f MB", Double(elapsed) / 1e9, Double(size) / 1e6), spread: "-",
      goal: "-", met: nil)
  }

  /// Goal 5: with 10,000 items in one store, opening the unlocked vault
  /// and reading one item under 5 ms, listing every item under 20 ms (CPU
  /// time of this thread, in process, as an app calls the library).
  static func vaultRows(scratch: Scratch, quick: Bool) throws -> [Row] {
    defer { setenv("TASKKEY_HOME", scratch.path("home"), 1) }
    let home = try freshVault(scratch, "vault-home")
    try Vault(at: home).setItems(count: itemCount, prefix: "item-", valueByteCount: 64, class: .afterFirstUnlock)
    let name = "item-" + String(format: "%05d", itemCount / 2)
    let rounds = quick ? 7 : 15
    let calls = 10
    func median(_ body: () throws -> Void) throws -> (Double, Double, Double) {
      let times = try (0..<rounds).map { _ in
        Double(try nanoseconds { for _ in 0..<calls { try body() } }) / Double(calls) / 1e6
      }.sorted()
      return (times[times.count / 2], times.first!, times.last!)
    }
    var listed = 0
    let open = try median {
      let item = try Vault(at: home).item(named: name)
      guard item.value.count == 64 else { throw BenchError.failed("item \(name) is not 64 bytes") }
    }
    let list = try median { listed = try Vault(at: home).items().count }
    guard listed == itemCount else { throw BenchError.failed("listed \(listed) items, not \(itemCount)") }
    return [
      Row(
        name: "vault: open (unlocked) and read one item", size: "\(itemCount) items",
        measured: String(format: "%.2f ms", open.0), spread: String(format: "%.2f-%.2f ms", open.1, open.2),
        goal: "< 5 ms", met: open.0 < 5),
      Row(
        name: "vault: list every item", size: "\(itemCount) items",
        measured: String(format: "%.2f ms", list.0), spread: String(format: "%.2f-%.2f ms", list.1, list.2),
        goal: "< 20 ms", met: list.0 < 20),
      Row(
        name: "vault: items per store (cap)", size: "-", measured: "\(VaultLimits.maximumItemCount)", spread: "-",
        goal: ">= 10^4", met: VaultLimits.maximumItemCount >= 10_000),
    ]
  }
}
