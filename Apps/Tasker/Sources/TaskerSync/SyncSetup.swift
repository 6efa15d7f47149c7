import TaskCrypto
import TaskSystem
import TaskVault
import TaskerCore
import TaskerHTTP

/// Turning sync on and off for one database, and reading what is set up:
/// the sync key (synchronisable) and the configuration record
/// (device-only) in the vault, the marker at the storage.
public struct SyncSetup {
  /// The database.
  public let store: TaskStore
  /// The vault directory.
  public let vaultDirectory: String

  /// Setup for `store` with the vault at `vaultDirectory`.
  public init(store: TaskStore, vaultDirectory: String) {
    self.store = store
    self.vaultDirectory = vaultDirectory
  }

  /// The configuration record's item name for this database.
  func itemName() throws -> String { SyncConfiguration.itemName(forDatabase: try store.canonicalDatabasePath()) }

  /// The configuration set up for this database.
  ///
  /// - Throws: `SyncError.notSetUp`, `.recordRefused`; vault errors.
  public func configuration() throws -> SyncConfiguration {
    let name = try itemName()
    let database = try store.canonicalDatabasePath()
    return try TaskerError.withVault(at: vaultDirectory) { vault in
      guard let item = try Self.item(named: name, in: vault) else { throw SyncError.notSetUp(database: database) }
      guard item.attributes.itemClass == .afterFirstUnlockThisDeviceOnly else {
        throw SyncError.recordRefused(item: name, outcome: .malformed)
      }
      let bytes = item.value.withUnsafeBytes { Array($0) }
      do {
        return try SyncConfiguration(reading: bytes, database: database)
      } catch let outcome as SyncOutcome {
        throw SyncError.recordRefused(item: name, outcome: outcome)
      }
    }
  }

  /// The sync keyring.
  ///
  /// - Throws: `SyncError.syncKeyMissing`, `.recordRefused`; vault errors.
  public func keyring() throws -> SyncKeyring {
    try TaskerError.withVault(at: vaultDirectory) { vault in
      guard let item = try Self.item(named: SyncKeyring.itemName, in: vault) else { throw SyncError.syncKeyMissing }
      guard item.attributes.itemClass == .afterFirstUnlock else {
        throw SyncError.recordRefused(item: SyncKeyring.itemName, outcome: .malformedSyncKey)
      }
      do {
        return try SyncKeyring(itemValue: item.value)
      } catch let outcome as SyncOutcome {
        throw SyncError.recordRefused(item: SyncKeyring.itemName, outcome: outcome)
      }
    }
  }

  /// The box key item's name for this database.
  func boxItemName() throws -> String {
    SyncConfiguration.boxItemName(forDatabase: try store.canonicalDatabasePath())
  }

  /// The keys a sync of this database works with: the keyring, and this
  /// device's box key (made and kept device-only when missing: a setup
  /// from before box keys); a keyring grown by an epoch change is saved
  /// to the vault.
  ///
  /// - Throws: `SyncError.syncKeyMissing`, `.recordRefused`; vault errors.
  public func keys() throws -> SyncKeys {
    let keyring = try keyring()
    let name = try boxItemName()
    let secret = try TaskerError.withVault(at: vaultDirectory) { vault -> SecureBytes in
      if let item = try Self.item(named: name, in: vault) {
        guard item.attributes.itemClass == .afterFirstUnlockThisDeviceOnly,
          item.value.count == AnonymousBox.keyByteCount
        else { throw SyncError.recordRefused(item: name, outcome: .malformed) }
        return item.value
      }
      let made = try AnonymousBox.generateKeyPair().secretKey
      try vault.setItem(made, named: name, label: "Tasker sync box key", class: .afterFirstUnlockThisDeviceOnly)
      return made
    }
    let directory = vaultDirectory
    return try SyncKeys(keyring: keyring, boxSecretKey: secret) { value in
      try TaskerError.withVault(at: directory) {
        try $0.setItem(value, named: SyncKeyring.itemName, label: "Tasker sync key", class: .afterFirstUnlock)
      }
    }
  }

  /// What `sync setup` was given: a folder, or a WebDAV URL with its
  /// credential and pinned authority.
  public enum Request {
    /// A folder path.
    case folder(String)
    /// A WebDAV URL (https, or http to loopback), the Basic user and its
    /// password (kept device-only in the vault), and a CA file or nil.
    case webdav(url: String, user: String?, password: SecureBytes?, caFile: String?)
  }

  /// Turns sync on: the storage's folders made, the sync key made when the
  /// vault has none and the storage has no marker (never for a storage
  /// another device set up), the marker written when missing (or read and
  /// checked), a new device id, the configuration and any password recorded
  /// device-only, and every record marked to be sent.
  ///
  /// - Returns: the configuration.
  /// - Throws: `SyncError.alreadySetUp`, `.targetMissing`, `.targetUnsafe`,
  ///   `.markerRefused`, `.syncKeyMissing`, `.storage`, `.network`,
  ///   `.credentialRejected`, `.invalidArgument`; vault and store errors.
  public func setUp(_ request: Request, deviceName: String) throws -> SyncConfiguration {
    guard (1...64).contains(deviceName.unicodeScalars.count),
      !deviceName.unicodeScalars.contains(where: SyncPayload.isControl), !deviceName.hasSuffix(" ")
    else {
      throw SyncError.invalidArgument(reason: "a device name is 1 to 64 characters, no control character")
    }
    if let existing = try? configuration() { throw SyncError.alreadySetUp(target: existing.location) }
    let (targetDescription, storage, password) = try Self.resolve(request)
    try storage.prepare()
    var marker = try storage.readMarker()
    // A storage set up by another device needs that device's key: never a new one here.
    let keyring = marker == nil ? try keyringMadeIfMissing() : try self.keyring()
    if marker == nil {
      let fresh = try SyncObjectFormat.marker(targetID: SecureRandom.bytes(count: 16), key: keyring.newest)
      _ = try storage.createMarker(fresh)
      marker = try storage.readMarker()
    }
    let targetID: [UInt8]
    do {
      targetID = try SyncObjectFormat.openMarker(marker ?? [], keyring: keyring)
    } catch {
      throw SyncError.markerRefused(path: storage.location + "/target", outcome: error)
    }
    let configuration = SyncConfiguration(
      target: targetDescription, targetID: Hex.encode(targetID), device: SyncHex.randomID(), name: deviceName)
    let database = try store.canonicalDatabasePath()
    let value = try SecureBytes(copying: configuration.encoded(database: database).withUnsafeBytes { $0 })
    try store.withSyncTransaction { rows in
      try rows.forgetTarget()
      try rows.adoptKeptBlobs(targetID: configuration.targetID, device: configuration.device)
      try rows.markEverythingDirty()
      try rows.setValue("resend", "1")
      try TaskerError.withVault(at: vaultDirectory) { vault in
        if let password {
          try vault.setItem(
            password, named: SyncConfiguration.passwordItemName(forDatabase: database),
            label: "Tasker sync password", class: .afterFirstUnlockThisDeviceOnly)
        }
        try vault.setItem(
          value, named: try itemName(), label: "Tasker sync target", class: .afterFirstUnlockThisDeviceOnly)
        try vault.setItem(
          try AnonymousBox.generateKeyPair().secretKey, named: try boxItemName(), label: "Tasker sync box key",
          class: .afterFirstUnlockThisDeviceOnly)
      }
    }
    return configuration
  }

  /// The target a request names, checked, and the storage to reach it.
  static func resolve(_ request: Request) throws -> (SyncConfiguration.Target, any SyncTarget, SecureBytes?) {
    switch request {
    case .folder(let folder):
      let canonical: String
      do {
        canonical = try FileStatus.canonicalPath(folder)
      } catch {
        throw SyncError.targetMissing(path: folder)
      }
      guard try SyncError.storing({ try FileStatus.of(canonical) })?.kind == .directory, !canonical.hasSuffix(" ")
      else { throw SyncError.targetMissing(path: folder) }
      return (.folder(canonical), FolderTarget(root: canonical + "/tasker-sync"), nil)
    case .webdav(let url, let user, let password, let caFile):
      let endpoint: HTTPEndpoint
      do {
        endpoint = try HTTPEndpoint(parsing: url)
      } catch {
        throw SyncError.network(error)
      }
      let canonicalCA = try caFile.map { file -> String in
        do {
          return try FileStatus.canonicalPath(file)
        } catch {
          throw SyncError.targetMissing(path: file)
        }
      }
      let storage = try WebDAVTarget(url: endpoint, user: user, password: password, caFile: canonicalCA)
      return (.webdav(url: endpoint.text, user: user, caFile: canonicalCA), storage, password)
    }
  }

  /// The storage `configuration` names, with the password from the vault;
  /// a WebDAV exchange may take `timeoutSeconds` in all.
  ///
  /// - Throws: `SyncError.network` for a URL that no longer parses; vault errors.
  public func storage(for configuration: SyncConfiguration, timeoutSeconds: Int = 120) throws -> any SyncTarget {
    switch configuration.target {
    case .folder(let folder): return FolderTarget(root: folder + "/tasker-sync")
    case .webdav(let url, let user, let caFile):
      let endpoint: HTTPEndpoint
      do {
        endpoint = try HTTPEndpoint(parsing: url)
      } catch {
        throw SyncError.network(error)
      }
      let database = try store.canonicalDatabasePath()
      let password =
        try user == nil
        ? nil
        : TaskerError.withVault(at: vaultDirectory) { vault in
          try Self.item(named: SyncConfiguration.passwordItemName(forDatabase: database), in: vault)?.value
        }
      return try WebDAVTarget(
        url: endpoint, user: user, password: password, caFile: caFile, timeoutSeconds: timeoutSeconds)
    }
  }

  /// Turns sync off: the configuration record removed and the devices and
  /// outbox forgotten. The storage and the sync key are left as they are;
  /// so are the blobs of deleted attachments not yet removed there, which
  /// are kept in the database (`keepDeletedBlobs`) for a later setup with
  /// the same target to remove.
  ///
  /// - Returns: how many such blobs stay at the storage.
  /// - Throws: `SyncError.notSetUp`; vault and store errors.
  @discardableResult
  public func turnOff() throws -> Int {
    let configuration = try configuration()
    let name = try itemName()
    return try store.withSyncTransaction { rows in
      let kept = try rows.keepDeletedBlobs(targetID: configuration.targetID, device: configuration.device)
      try rows.keepFormerDevice(configuration.device, targetID: configuration.targetID)
      try rows.forgetTarget()
      let password = SyncConfiguration.passwordItemName(forDatabase: try store.canonicalDatabasePath())
      let box = try boxItemName()
      try TaskerError.withVault(at: vaultDirectory) { vault in
        try vault.removeItem(named: name)
        for other in [password, box] where try Self.item(named: other, in: vault) != nil {
          try vault.removeItem(named: other)
        }
      }
      return kept
    }
  }

  private func keyringMadeIfMissing() throws -> SyncKeyring {
    do {
      return try keyring()
    } catch SyncError.syncKeyMissing {
      let (keyring, value) = try SyncKeyring.generate()
      try TaskerError.withVault(at: vaultDirectory) {
        try $0.setItem(value, named: SyncKeyring.itemName, label: "Tasker sync key", class: .afterFirstUnlock)
      }
      return keyring
    }
  }

  static func item(named name: String, in vault: Vault) throws -> VaultItem? {
    do {
      return try vault.item(named: name)
    } catch TaskVaultError.itemNotFound {
      return nil
    }
  }
}
