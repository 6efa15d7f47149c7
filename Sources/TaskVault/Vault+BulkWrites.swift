import FoundationEssentials
import TaskCrypto

extension Vault {
  /// Package seam for `taskkey-bench` (its fixture is in
  /// `Sources/taskkey-bench/Fixtures.swift`): stores one item per name,
  /// labelled with its name, all holding the bytes of `value` (one locked
  /// buffer shared by every item), in the store of `itemClass`, in one
  /// write, as that many `setItem` calls would. A vault of 10,000 items
  /// made by `setItem` would take 10,000 rewrites of a growing store.
  /// `package`, not `public`: items that share one buffer are a bench
  /// shortcut, not an API.
  ///
  /// - Throws: as `setItem`.
  package func setItems(named names: [String], value: SecureBytes, class itemClass: VaultItemClass) throws {
    for name in names {
      try validateItemName(name)
      try validateLabel(name)
    }
    guard value.count <= VaultLimits.maximumValueByteCount else {
      throw TaskVaultError.itemTooLarge(byteCount: value.count, limit: VaultLimits.maximumValueByteCount)
    }
    let now = environment.now()
    try modify { stores in
      let target = StoreID(itemClass)
      let replaced = Set(names)
      var items = stores[target].items.filter { !replaced.contains($0.name) }
      for name in names {
        if stores[target.other].index(of: name) != nil {
          throw TaskVaultError.itemClassConflict(name: name, existing: target.other.itemClass)
        }
        items.append(
          StoredItem(
            name: name, label: name, itemClass: itemClass, created: now, modified: now, value: ItemValue(value)))
      }
      stores[target].items = items.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }
  }
}
