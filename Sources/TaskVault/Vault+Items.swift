import FoundationEssentials
import TaskCrypto

extension Vault {
  /// Stores `value` under `name` in the store of `itemClass`, replacing an
  /// item of the same name and class (its created time is kept).
  ///
  /// - Parameters:
  ///   - value: at most 64 KiB, in locked memory.
  ///   - name: 1 to 128 bytes of `A-Z a-z 0-9 . _ - : @ /`.
  ///   - label: at most 256 bytes of UTF-8; when nil, the existing item's
  ///     label, or the name for a new item.
  ///   - itemClass: which store; device-only items never leave the device.
  /// - Throws: `TaskVaultError.locked`, `.invalidItemName`, `.invalidLabel`,
  ///   `.itemTooLarge`, `.itemClassConflict`, `.storeFull`, and the errors
  ///   of reading and writing the file.
  public func setItem(_ value: SecureBytes, named name: String, label: String? = nil, class itemClass: VaultItemClass)
    throws
  {
    try validateItemName(name)
    try validateLabel(label ?? name)
    guard value.count <= VaultLimits.maximumValueByteCount else {
      throw TaskVaultError.itemTooLarge(byteCount: value.count, limit: VaultLimits.maximumValueByteCount)
    }
    let now = environment.now()
    try modify { stores in
      let target = StoreID(itemClass)
      if stores[target.other].index(of: name) != nil {
        throw TaskVaultError.itemClassConflict(name: name, existing: target.other.itemClass)
      }
      let existing = stores[target].index(of: name).map { stores[target].items[$0] }
      let copy = try value.withUnsafeBytes { raw in try wrapCrypto { try SecureBytes(copying: raw) } }
      stores[target].put(
        StoredItem(
          name: name, label: label ?? existing?.label ?? name, itemClass: itemClass, created: existing?.created ?? now,
          modified: now, value: copy))
    }
  }

  /// Returns the item named `name` with its value.
  ///
  /// - Throws: `TaskVaultError.itemNotFound`, `.locked`, and the errors of
  ///   reading the file.
  public func item(named name: String) throws -> VaultItem {
    let stores = try read()
    guard let id = stores.store(holding: name), let index = stores[id].index(of: name) else {
      throw TaskVaultError.itemNotFound(name: name)
    }
    let item = stores[id].items[index]
    return VaultItem(attributes: item.attributes, value: try item.value.copied())
  }

  /// Returns the items named `names` from one read of the vault (one
  /// shared lock, each file read and each store opened once): what
  /// `item(named:)` gives for each name, for a caller that needs several,
  /// such as the assistant-key registry's integrity key and generation.
  ///
  /// - Returns: the items found, by name; a name without an item is absent.
  /// - Throws: `TaskVaultError.locked`, and the errors of reading the file.
  public func items(named names: [String]) throws -> [String: VaultItem] {
    let stores = try read()
    var found = [String: VaultItem]()
    for name in names {
      guard let id = stores.store(holding: name), let index = stores[id].index(of: name) else { continue }
      let item = stores[id].items[index]
      found[name] = VaultItem(attributes: item.attributes, value: try item.value.copied())
    }
    return found
  }

  /// Lists every item's attributes, sorted by name; values stay sealed.
  ///
  /// - Throws: `TaskVaultError.locked` and the errors of reading the file.
  public func items() throws -> [VaultItemAttributes] {
    try read().sortedItems.map(\.attributes)
  }

  /// Removes the item named `name` from whichever store holds it.
  ///
  /// - Throws: `TaskVaultError.itemNotFound`, `.locked`, and the errors of
  ///   reading and writing the file.
  public func removeItem(named name: String) throws {
    try modify { stores in
      guard let id = stores.store(holding: name), let position = stores[id].index(of: name) else {
        throw TaskVaultError.itemNotFound(name: name)
      }
      stores[id].items.remove(at: position)
    }
  }

  /// The note keyring from the synchronisable store (made at `init`).
  /// Reads `vault.tkv` and the unlock session only: the device-only file
  /// is never opened, so a damaged or unreadable `device.tkv` does not
  /// stop notes from opening, and no device-only secret is decrypted to
  /// read a note key.
  ///
  /// - Throws: `TaskVaultError.locked` and the errors of reading the file.
  public func noteKeyring() throws -> Keyring {
    try readSynchronisable().noteKeyring(path: layout.vaultFile)
  }

  /// The ids of the note keys retired from this vault (or from a vault it
  /// imported from), ascending: tombstones that are never added back.
  ///
  /// - Throws: `TaskVaultError.locked` and the errors of reading the file.
  public func retiredNoteKeyIDs() throws -> [KeyID] {
    try readSynchronisable().retired
  }

  /// Replaces the note keyring through `body` (rotation, promotion,
  /// retirement), under the write lock.
  ///
  /// - Throws: `TaskVaultError.locked`, what `body` throws, and the errors
  ///   of reading and writing the file.
  public func updateNoteKeyring(_ body: (inout Keyring) throws -> Void) throws {
    try modify { stores in
      var keyring = try stores.synchronisable.noteKeyring(path: layout.vaultFile)
      let before = Set(keyring.ids)
      try body(&keyring)
      // A key that leaves the keyring is remembered as retired (a
      // tombstone that travels in bundles and backups); a retired id never
      // comes back.
      let after = Set(keyring.ids)
      if let revived = after.subtracting(before).first(where: { stores.synchronisable.retired.contains($0) }) {
        throw TaskVaultError.retiredKey(revived)
      }
      stores.synchronisable.remember(retired: Array(before.subtracting(after)))
      stores.synchronisable.keyring = keyring
    }
  }

}
