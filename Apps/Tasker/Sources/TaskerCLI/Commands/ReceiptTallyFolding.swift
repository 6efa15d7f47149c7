import FoundationEssentials
import TaskerCore

extension CommandContext {
  /// Folds every open tally (of every key, the current window's too) into
  /// its receipt before receipts are listed or verified, so nothing the
  /// gate counted is missing from the view (receipt.md, *Aggregated
  /// receipts*). Opens the store for writing only when a tally is open; a
  /// home without a database has none.
  ///
  /// - Throws: the store's errors.
  func foldOpenTallies() throws {
    guard let reader = try readerIfPresent(), try reader.hasOpenTallies() else { return }
    let writer = try TaskStore(home: home(), keys: VaultKeySource(environment: environment), create: false)
    try writer.foldTallies(now: Int64(Date().timeIntervalSince1970))
  }
}
