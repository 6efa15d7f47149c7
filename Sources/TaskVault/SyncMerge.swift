import TaskCrypto

/// How a sync bundle's plaintext merges into the synchronisable store
/// (docs/formats/sync-bundle.md, "Import"): pure, no I/O, all or nothing.
enum SyncMerge {
  /// Merges `incoming` (a bundle's store, whose keyring is `incomingKeyring`)
  /// into `stores.synchronisable`; `stores.deviceOnly` only names the items
  /// that are skipped.
  ///
  /// - Returns: what changed.
  /// - Throws: `TaskVaultError.retiredKey` when the bundle retires this
  ///   vault's primary (after any adoption) or `.adopt` names a retired key;
  ///   `.keyConflict` when a key id is held with other bytes. On a throw
  ///   `stores` may be half changed; the caller writes nothing.
  static func merge(
    _ incoming: StoreContents, keyring incomingKeyring: Keyring, into stores: inout Stores,
    primary choice: SyncPrimaryChoice, path: String
  ) throws -> SyncImportReport {
    var keyring = try stores.synchronisable.noteKeyring(path: path)
    var result = SyncImportReport(previousPrimaryID: keyring.primaryID, primaryID: keyring.primaryID)
    // Retirements travel with the store and win over a key from an older
    // bundle: a key retired on either side is never added back.
    let retired = Set(stores.synchronisable.retired).union(incoming.retired)
    let adoptPrimary: Bool
    switch choice {
    case .adopt: adoptPrimary = true
    case .keep: adoptPrimary = false
    case .automatic:
      // The other device rotated: a primary this vault did not hold before
      // the import, and that neither side retired.
      let bundlePrimary = incomingKeyring.primaryID
      adoptPrimary = keyring.key(for: bundlePrimary) == nil && !retired.contains(bundlePrimary)
    }
    for key in incomingKeyring.keys {
      if retired.contains(key.id) {
        result.refusedRetiredKeyIDs.append(key.id)
      } else if let local = keyring.key(for: key.id) {
        guard local.key == key.key else { throw TaskVaultError.keyConflict(key.id) }
        result.unchangedKeyIDs.append(key.id)
      } else {
        try wrapCrypto { try keyring.add(key) }
        result.addedKeyIDs.append(key.id)
      }
    }
    if adoptPrimary {
      guard !retired.contains(incomingKeyring.primaryID) else {
        throw TaskVaultError.retiredKey(incomingKeyring.primaryID)
      }
      try wrapCrypto { try keyring.promote(incomingKeyring.primaryID) }
      result.primaryID = incomingKeyring.primaryID
    }
    // After an adoption, so a bundle that rotated away from the primary
    // both devices shared, and retired it, moves this vault along.
    for id in incoming.retired where keyring.key(for: id) != nil {
      guard id != keyring.primaryID else { throw TaskVaultError.retiredKey(id) }
      try wrapCrypto { try keyring.retire(id) }
      result.retiredKeyIDs.append(id)
    }
    stores.synchronisable.keyring = keyring
    stores.synchronisable.remember(retired: Array(retired))
    for item in incoming.items {
      if stores.deviceOnly.index(of: item.name) != nil {
        result.skippedItems.append(item.name)
      } else if let index = stores.synchronisable.index(of: item.name) {
        if item.modified > stores.synchronisable.items[index].modified {
          stores.synchronisable.items[index] = item
          result.updatedItems.append(item.name)
        } else {
          result.keptItems.append(item.name)
        }
      } else {
        stores.synchronisable.put(item)
        result.addedItems.append(item.name)
      }
    }
    return result
  }
}
