import FoundationEssentials
import TaskCrypto
import TaskVault

/// Where the store gets the note keys that seal and open bodies.
///
/// The store asks only when it must seal or open a body, and at most once
/// per store: listing tasks, reading titles and writing plain fields need
/// no key, so they work while the vault is locked. A long-running store
/// (the assistant gate, a large attachment) asks again when the source's
/// revision says the keyring changed, so it never seals under a key that
/// `taskkey rotate` replaced.
public protocol NoteKeySource {
  /// The note keyring: the primary key seals, every key opens.
  ///
  /// - Throws: `TaskerError.vaultLocked`, `.vaultNotFound` or `.vault`.
  func noteKeyring() throws -> Keyring

  /// Where this source keeps each database's protection settings (a
  /// vault), or nil when it keeps none (a bare keyring: the store then
  /// keeps them in memory for its life). Never the database itself.
  var protectionRecords: (any ProtectionRecords)? { get }

  /// Where this source keeps the receipt head's key (the vault), or nil
  /// when it keeps none: then no `receipts.head` is written.
  var receiptHeadKeys: (any ReceiptHeadKeys)? { get }

  /// The keyring with the revision of the state it was read from, or nil
  /// as revision when the source has none (then every check reads the
  /// keyring again).
  ///
  /// - Throws: as `noteKeyring()`.
  func noteKeyringWithRevision() throws -> (keyring: Keyring, revision: VaultRevision?)

  /// The revision of the keyring now, read without unwrapping any key, or
  /// nil when the source has none.
  ///
  /// - Throws: `TaskerError.vaultNotFound`, `.vault`.
  func noteKeyringRevision() throws -> VaultRevision?
}

extension NoteKeySource {
  /// The keyring without a revision: every check reads it again.
  public func noteKeyringWithRevision() throws -> (keyring: Keyring, revision: VaultRevision?) {
    (try noteKeyring(), nil)
  }

  /// No revision: every check reads the keyring again.
  public func noteKeyringRevision() throws -> VaultRevision? { nil }
}

/// A keyring the caller already holds (an app that manages keys itself).
extension Keyring: NoteKeySource {
  /// This keyring.
  public func noteKeyring() -> Keyring { self }
}

/// The note keys of the user's TaskKey vault, read through TaskKey's
/// library: the vault must have been unlocked (`taskkey unlock`) since the
/// machine started. Nothing is cached on disk; the keys live in TaskKey's
/// locked memory for as long as the store holds them.
public struct VaultKeySource: NoteKeySource {
  /// The vault directory, or nil when the environment names none.
  public let directory: String?

  /// The vault TaskKey itself would use: `TASKKEY_HOME`, else
  /// `$XDG_DATA_HOME/tasker/keys`, else `~/.local/share/tasker/keys`.
  public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    directory = Vault.defaultDirectory(environment: environment)
  }

  /// The vault at `directory`.
  public init(directory: String) {
    self.directory = directory
  }

  /// Opens the vault and reads its note keyring.
  ///
  /// - Throws: `TaskerError.noVaultLocation`, `.vaultNotFound` (no vault
  ///   there), `.vaultLocked` (not unlocked since boot, locked, or expired),
  ///   `.vault` for anything else the vault reports.
  public func noteKeyring() throws -> Keyring {
    try vaultCall { try $0.noteKeyring() }
  }

  /// Opens the vault and reads its note keyring with the revision of
  /// `vault.tkv` it came from (`Vault.noteKeyringWithRevision()`).
  ///
  /// - Throws: as `noteKeyring()`.
  public func noteKeyringWithRevision() throws -> (keyring: Keyring, revision: VaultRevision?) {
    let (keyring, revision) = try vaultCall { try $0.noteKeyringWithRevision() }
    return (keyring, revision)
  }

  /// The revision of `vault.tkv` now (`Vault.revision()`): one small file
  /// read, no key unwrapped.
  ///
  /// - Throws: `TaskerError.noVaultLocation`, `.vaultNotFound`, `.vault`.
  public func noteKeyringRevision() throws -> VaultRevision? {
    try vaultCall { try $0.revision() }
  }

  private func vaultCall<Result>(_ body: (Vault) throws -> Result) throws -> Result {
    guard let directory else { throw TaskerError.noVaultLocation }
    return try TaskerError.withVault(at: directory, body)
  }
}

extension TaskerError {
  /// Runs `body` on the vault at `directory`, the vault's errors given as
  /// Tasker's: what every Tasker reader of the vault shares.
  ///
  /// - Throws: `TaskerError.vaultNotFound` (no vault there), `.vaultLocked`
  ///   (not unlocked since boot, locked, or expired), `.vault` for anything
  ///   else the vault reports; `body`'s other errors as they are.
  public static func withVault<Result>(at directory: String, _ body: (Vault) throws -> Result) throws -> Result {
    do {
      return try body(try Vault(at: directory))
    } catch let error as TaskVaultError {
      switch error {
      case .locked(let reason): throw TaskerError.vaultLocked(reason: reason)
      case .notInitialised: throw TaskerError.vaultNotFound(path: directory)
      default: throw TaskerError.vault(error)
      }
    }
  }
}

/// Seals and opens bodies for one store, asking the key source once and
/// then only when its revision changed.
///
/// The rule that keeps every acknowledged write off a retired key: a
/// value is sealed inside the write transaction that stores it (SQLite's
/// write lock, which `tasker rewrap` takes too), under a keyring confirmed
/// current in that transaction. A commit then either precedes rewrap's
/// scan, which reseals it, or its check saw the rotation that came before
/// rewrap and sealed under the new primary key.
final class BodySealer {
  private let source: NoteKeySource
  private var cached: (keyring: Keyring, revision: VaultRevision?)?

  init(source: NoteKeySource) {
    self.source = source
  }

  /// The keyring, read from the source on first use (not confirmed again).
  func keyring() throws -> Keyring {
    if let cached { return cached.keyring }
    let read = try source.noteKeyringWithRevision()
    cached = read
    return read.keyring
  }

  /// The source's current keyring: the one held when the source's
  /// revision is unchanged (one cheap read), else read again. Call it
  /// inside the write transaction whose values it seals.
  ///
  /// - Throws: the key source's errors.
  func currentKeyring() throws -> Keyring {
    if let cached, let revision = cached.revision, try source.noteKeyringRevision() == revision {
      return cached.keyring
    }
    let read = try source.noteKeyringWithRevision()
    cached = read
    return read.keyring
  }

  /// Confirms that `keyID` is still the source's primary key, for a value
  /// sealed before the transaction that stores it (an attachment file).
  ///
  /// - Throws: `TaskerError.noteKeyChanged` naming `record` when the
  ///   primary key is another one now (the caller stores nothing); the key
  ///   source's errors.
  func requirePrimary(_ keyID: KeyID, record: String) throws {
    let primary = try currentKeyring().primaryID
    guard primary == keyID else {
      throw TaskerError.noteKeyChanged(record: record, sealedWith: keyID.hex, primary: primary.hex)
    }
  }

  /// Seals `text` for `context` under the current primary key (confirmed
  /// with `currentKeyring()`); an empty text stays empty. Call it inside the
  /// write transaction that stores the value.
  ///
  /// - Throws: the key source's errors, `TaskerError.sealingFailed`.
  func seal(_ text: String, context: String) throws -> String {
    guard !text.isEmpty else { return text }
    return try seal(text, context: context, using: try currentKeyring())
  }

  /// Seals `text` under `keyring`, which the caller confirmed current in
  /// this transaction (`currentKeyring()`), for a batch of values.
  ///
  /// - Throws: `TaskerError.sealingFailed`.
  func seal(_ text: String, context: String, using keyring: Keyring) throws -> String {
    guard !text.isEmpty else { return text }
    do {
      return try SealedValue.seal(text, using: keyring, context: context)
    } catch let error as TaskCryptoError {
      throw TaskerError.sealingFailed(record: context, cause: error)
    }
  }

  /// Opens a stored body: a plain value comes back unchanged without any
  /// key; a sealed one needs the key that sealed it (a key the held keyring
  /// lacks makes the sealer read the current keyring first, so a
  /// long-running store opens bodies a rotation and rewrap moved).
  ///
  /// - Throws: the key source's errors, `TaskerError.sealedBodyUnreadable`
  ///   (never the ciphertext as text).
  func open(_ stored: String, context: String) throws -> String {
    guard SealedValue.isSealed(stored) else { return stored }
    var keyring = try keyring()
    if let keyID = try? SealedValue.keyID(of: stored), keyring.key(for: keyID) == nil {
      keyring = try currentKeyring()
    }
    do {
      return try SealedValue.open(stored, using: keyring, context: context)
    } catch let error as TaskCryptoError {
      throw TaskerError.sealedBodyUnreadable(record: context, cause: error)
    }
  }
}

/// The contexts that bind a sealed body to its record and field.
enum BodyContext {
  /// `task/<id>/notes`.
  static func notes(ofTask id: Int64) -> String { "task/\(id)/notes" }
  /// `page/<id>/body`.
  static func body(ofPage id: Int64) -> String { "page/\(id)/body" }
}
