import FoundationEssentials
import TaskCrypto

extension Vault {
  /// A benchmark fixture (`taskkey-bench`, issue 14): stores `count` items
  /// named `<prefix><n>` (n zero-padded to 5 digits), each holding
  /// `valueByteCount` bytes of `0x61`, in the store of `itemClass`, in one
  /// write, as that many `setItem` calls would. A vault of 10,000 items
  /// made by `setItem` would take 10,000 rewrites of a growing store. The
  /// label is the name; the values share one locked buffer.
  ///
  /// - Throws: as `setItem`.
  @_spi(Benchmark) public func setItems(
    count: Int, prefix: String, valueByteCount: Int, class itemClass: VaultItemClass
  ) throws {
    let names = (0..<count).map { index in
      let digits = String(index)
      return prefix + String(repeating: "0", count: max(0, 5 - digits.count)) + digits
    }
    for name in names {
      try validateItemName(name)
      try validateLabel(name)
    }
    guard valueByteCount <= VaultLimits.maximumValueByteCount else {
      throw TaskVaultError.itemTooLarge(byteCount: valueByteCount, limit: VaultLimits.maximumValueByteCount)
    }
    let region = try wrapCrypto { try SecureBytes(zeroedCount: valueByteCount) }
    region.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0x61) }
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
            name: name, label: name, itemClass: itemClass, created: now, modified: now, value: ItemValue(region)))
      }
      stores[target].items = items.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }
  }
}
