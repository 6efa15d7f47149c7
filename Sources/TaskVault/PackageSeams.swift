import TaskCrypto

/// TaskVault's package seams: the session reader and the sync merge that
/// every command runs, over bytes and values in memory, so that the
/// vectors target (`Sources/TaskKeyVectors`, which `taskkey vectors check`
/// and the tests link) decides the unlock-session and sync-import vectors
/// with the very code the vault uses, without files. `package`, not
/// `public`: only modules of the TaskKey package can call them; an app that
/// links TaskVault cannot (ARCHITECTURE.md, "Package seams").
package enum VaultReaders {
  /// The bytes of a vault file a session is bound to: 0..<121, the header
  /// up to the generation (the vault id is bytes 10..<26).
  package static let sessionHeaderByteCount = VaultFile.generationOffset

  /// What an open session gives.
  package struct SessionKeys {
    /// MK_1, the synchronisable store's master key.
    package var masterKey: SymmetricKey
    /// DWK, the key that wraps the device-only master key.
    package var deviceWrapKey: SymmetricKey
    /// The session's time limit in seconds since 1970 (0: none).
    package var notAfter: Int64
  }

  /// Steps 1 to 8 of docs/formats/unlock-session.md ("Reading") over bytes:
  /// `UnlockSession.open`, with the session key files parsed as the reader
  /// parses them (`SessionKeyFile.parse`).
  ///
  /// - Parameters:
  ///   - session: the session file, or nil when there is none.
  ///   - keyFiles: the session key file, then `.next`; nil where none exists.
  ///   - vaultHeader: the vault file's first `sessionHeaderByteCount` bytes.
  ///   - bootID: the kernel's current boot id (16 bytes).
  ///   - now: seconds since 1970.
  /// - Returns: the keys and the time limit.
  /// - Throws: `TaskVaultError.locked` with the step's reason, `.tampered`.
  package static func openSession(
    session: [UInt8]?, keyFiles: [[UInt8]?], vaultHeader: [UInt8], bootID: [UInt8], now: Int64
  ) throws -> SessionKeys {
    precondition(vaultHeader.count == sessionHeaderByteCount, "a session binds the vault header's 121 bytes")
    let opened = try UnlockSession.open(
      session: session, vaultID: Array(vaultHeader[10..<26]), headerDigest: SHA256.hash(data: vaultHeader).bytes,
      bootID: { bootID }, now: now, vaultFile: "vault.tkv",
      sessionKeys: { boot in
        try keyFiles.compactMap { bytes in
          try bytes.flatMap { try $0.withUnsafeBytes { try SessionKeyFile.parse($0, bootID: boot) } }
        }
      })
    return SessionKeys(masterKey: opened.keys.sync, deviceWrapKey: opened.keys.deviceWrap, notAfter: opened.notAfter)
  }

  /// A synchronisable store as the sync merge sees it.
  package struct SyncStore {
    /// The note keys and the primary.
    package var keyring: Keyring
    /// Ids of retired note keys.
    package var retired: [KeyID]
    /// The items: name, modification time (seconds since 1970), value.
    package var items: [(name: String, modified: Int64, value: SecureBytes)]

    /// A store.
    package init(keyring: Keyring, retired: [KeyID], items: [(name: String, modified: Int64, value: SecureBytes)]) {
      (self.keyring, self.retired, self.items) = (keyring, retired, items)
    }
  }

  /// `sync import`'s merge (`SyncMerge.merge`, docs/formats/sync-bundle.md,
  /// "Import") of a bundle's store into a local synchronisable store, in
  /// memory: all or nothing.
  ///
  /// - Parameters:
  ///   - incoming: the bundle's store.
  ///   - local: the local synchronisable store.
  ///   - deviceOnlyNames: the names of the local device-only items (skipped).
  ///   - choice: the primary option the import runs with.
  /// - Returns: the local store after the merge.
  /// - Throws: `TaskVaultError.keyConflict`, `.retiredKey`, and the errors
  ///   of locked memory.
  package static func mergeSync(
    _ incoming: SyncStore, into local: SyncStore, deviceOnlyNames: [String], primary choice: SyncPrimaryChoice
  ) throws -> SyncStore {
    let deviceOnly = try deviceOnlyNames.map { name in
      StoredItem(
        name: name, label: "", itemClass: .afterFirstUnlockThisDeviceOnly, created: 0, modified: 0,
        value: try wrapCrypto { try [UInt8]().withUnsafeBytes { try SecureBytes(copying: $0) } })
    }
    var stores = Stores(
      synchronisable: contents(local), deviceOnly: StoreContents(keyring: nil, items: sorted(deviceOnly)))
    let incomingContents = contents(incoming)
    _ = try SyncMerge.merge(
      incomingContents, keyring: incoming.keyring, into: &stores, primary: choice, path: "vault.tkv")
    let merged = stores.synchronisable
    return SyncStore(
      keyring: try merged.noteKeyring(path: "vault.tkv"), retired: merged.retired,
      items: try merged.items.map { ($0.name, $0.modified, try $0.value.copied()) })
  }

  private static func contents(_ store: SyncStore) -> StoreContents {
    let items = store.items.map {
      StoredItem(
        name: $0.name, label: "", itemClass: .afterFirstUnlock, created: $0.modified, modified: $0.modified,
        value: $0.value)
    }
    var contents = StoreContents(keyring: store.keyring, items: sorted(items))
    contents.remember(retired: store.retired)
    return contents
  }

  private static func sorted(_ items: [StoredItem]) -> [StoredItem] {
    items.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
  }
}
