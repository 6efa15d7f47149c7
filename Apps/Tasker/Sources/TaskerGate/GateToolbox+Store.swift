import FoundationEssentials
import TaskVault
import TaskerCore

extension GateToolbox {
  /// The tools of an assistant whose key verified.
  ///
  /// - Parameters:
  ///   - store: the user's store.
  ///   - identity: the key's identity.
  ///   - clock: the time source (tests choose it).
  ///   - calendar: the calendar with the user's time zone.
  ///   - vaultDirectory: the vault whose key registry says which earlier
  ///     keys of the assistant a rotated key replaced (their budget setting
  ///     carries over); nil, or a directory without a vault, knows none.
  public convenience init(
    store: TaskStore, identity: GateIdentity, clock: @escaping () -> Date = Date.init, calendar: Calendar = .current,
    vaultDirectory: String? = Vault.defaultDirectory(environment: ProcessInfo.processInfo.environment)
  ) {
    self.init(
      stores: GateStorePool(single: store), identity: identity, clock: clock, calendar: calendar,
      vaultDirectory: vaultDirectory)
  }
}
