import TaskCrypto
import TaskVault
import TaskerCore

/// The planning providers of this device: records kept as device-only
/// items `tasker/provider/NAME` of the user's TaskKey vault, and the keys
/// they name, read from the vault at the moment of a call.
///
/// Nothing of a provider is in the database: a row cannot say where tasks
/// go, under which key, or that sending was confirmed. Every record is
/// checked by the rules of its format each time it is read.
public struct ProviderBook {
  /// The vault directory.
  public let directory: String

  /// The book in the vault TaskKey itself would use (`TASKKEY_HOME`, else
  /// the default location).
  ///
  /// - Throws: `TaskerError.noVaultLocation` when the environment names none.
  public init(environment: [String: String]) throws {
    guard let directory = Vault.defaultDirectory(environment: environment) else {
      throw TaskerError.noVaultLocation
    }
    self.directory = directory
  }

  /// The book in the vault at `directory`.
  public init(directory: String) {
    self.directory = directory
  }

  /// Every provider, by name.
  ///
  /// - Throws: `PlanningError.recordMalformed` (a record is not a
  ///   device-only item or breaks a rule), `.recordUnsupportedVersion`;
  ///   `TaskerError.vaultLocked`, `.vaultNotFound`, `.vault`.
  public func records() throws -> [ProviderRecord] {
    try vaultCall { vault in
      let names = try vault.items().map(\.name).filter { $0.hasPrefix(ProviderRecord.itemPrefix) }
      let items = try vault.items(named: names)
      return try names.compactMap { name in try items[name].map(Self.record) }
    }
  }

  /// The provider named `name`.
  ///
  /// - Throws: `PlanningError.providerNotFound`, and as `records()`.
  public func record(named name: String) throws -> ProviderRecord {
    guard ProviderRecord.isName(name) else { throw PlanningError.invalidProviderName(name) }
    return try vaultCall { vault in
      do {
        return try Self.record(try vault.item(named: ProviderRecord.itemPrefix + name))
      } catch TaskVaultError.itemNotFound {
        throw PlanningError.providerNotFound(name: name)
      }
    }
  }

  /// The provider to use: `name`'s, or the only one when `name` is nil.
  ///
  /// - Throws: `PlanningError.noProvider`, `.severalProviders`, and as
  ///   `record(named:)`.
  public func choose(_ name: String?) throws -> ProviderRecord {
    if let name { return try record(named: name) }
    let all = try records()
    guard let only = all.first else { throw PlanningError.noProvider }
    guard all.count == 1 else { throw PlanningError.severalProviders(names: all.map(\.name)) }
    return only
  }

  /// Stores a new provider.
  ///
  /// - Throws: `PlanningError.providerExists` (nothing changed), and the
  ///   vault's errors as `TaskerError`.
  public func add(_ record: ProviderRecord) throws {
    try vaultCall { vault in
      if try vault.items().contains(where: { $0.name == record.itemName }) {
        throw PlanningError.providerExists(name: record.name)
      }
      try Self.store(record, in: vault)
    }
  }

  /// Replaces a provider's record (its confirmation).
  ///
  /// - Throws: the vault's errors as `TaskerError`.
  public func save(_ record: ProviderRecord) throws {
    try vaultCall { vault in try Self.store(record, in: vault) }
  }

  /// Removes a provider (its key item stays: it is the user's).
  ///
  /// - Throws: `PlanningError.providerNotFound`, the vault's errors.
  public func remove(named name: String) throws {
    guard ProviderRecord.isName(name) else { throw PlanningError.invalidProviderName(name) }
    try vaultCall { vault in
      do {
        try vault.removeItem(named: ProviderRecord.itemPrefix + name)
      } catch TaskVaultError.itemNotFound {
        throw PlanningError.providerNotFound(name: name)
      }
    }
  }

  /// The bearer key of `record`, read now from its device-only item, in
  /// locked memory; nil when the record names no key item.
  ///
  /// - Throws: `PlanningError.keyItemMissing`, `.keyItemNotDeviceOnly`,
  ///   `.keyValueUnusable`; the vault's errors as `TaskerError`.
  public func bearerKey(for record: ProviderRecord) throws -> SecureBytes? {
    guard let name = record.keyItem else { return nil }
    return try vaultCall { vault in
      let item: VaultItem
      do {
        item = try vault.item(named: name)
      } catch TaskVaultError.itemNotFound {
        throw PlanningError.keyItemMissing(name: name)
      }
      guard item.attributes.itemClass == .afterFirstUnlockThisDeviceOnly else {
        throw PlanningError.keyItemNotDeviceOnly(name: name)
      }
      let usable = item.value.withUnsafeBytes { key in
        (1...4096).contains(key.count) && key.allSatisfy { $0 > 0x20 && $0 < 0x7F }
      }
      guard usable else { throw PlanningError.keyValueUnusable(name: name) }
      return item.value
    }
  }

  static func record(_ item: VaultItem) throws -> ProviderRecord {
    let name = item.attributes.name
    guard item.attributes.itemClass == .afterFirstUnlockThisDeviceOnly else {
      throw PlanningError.recordMalformed(
        name: String(name.dropFirst(ProviderRecord.itemPrefix.count)), reason: "the item is not device-only")
    }
    let bytes = item.value.withUnsafeBytes { Array($0) }
    return try ProviderRecord(itemName: name, bytes: bytes)
  }

  static func store(_ record: ProviderRecord, in vault: Vault) throws {
    let bytes = record.encoded
    let value = try bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
    try vault.setItem(
      value, named: record.itemName, label: "Tasker planning provider \(record.name)",
      class: .afterFirstUnlockThisDeviceOnly)
  }

  private func vaultCall<Result>(_ body: (Vault) throws -> Result) throws -> Result {
    try TaskerError.withVault(at: directory, body)
  }
}
