import FoundationEssentials
import TaskCrypto
import TaskVault

/// Where the store gets the note keys that seal and open bodies.
///
/// The store asks only when it must seal or open a body, and at most once
/// per store: listing tasks, reading titles and writing plain fields need
/// no key, so they work while the vault is locked.
public protocol NoteKeySource {
  /// The note keyring: the primary key seals, every key opens.
  ///
  /// - Throws: `TaskerError.vaultLocked`, `.vaultNotFound` or `.vault`.
  func noteKeyring() throws -> Keyring

  /// Where this source keeps each database's protection settings (a
  /// vault), or nil when it keeps none (a bare keyring: the store then
  /// keeps them in memory for its life). Never the database itself.
  var protectionRecords: (any ProtectionRecords)? { get }
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
    guard let directory else { throw TaskerError.noVaultLocation }
    do {
      return try Vault(at: directory).noteKeyring()
    } catch let error as TaskVaultError {
      switch error {
      case .locked(let reason): throw TaskerError.vaultLocked(reason: reason)
      case .notInitialised: throw TaskerError.vaultNotFound(path: directory)
      default: throw TaskerError.vault(error)
      }
    }
  }
}

/// Seals and opens bodies for one store, asking the key source once.
final class BodySealer {
  private let source: NoteKeySource
  private var cached: Keyring?

  init(source: NoteKeySource) {
    self.source = source
  }

  /// The keyring, read from the source on first use.
  func keyring() throws -> Keyring {
    if let cached { return cached }
    let keyring = try source.noteKeyring()
    cached = keyring
    return keyring
  }

  /// Seals `text` for `context`; an empty text stays empty.
  ///
  /// - Throws: the key source's errors, `TaskerError.sealingFailed`.
  func seal(_ text: String, context: String) throws -> String {
    guard !text.isEmpty else { return text }
    let keyring = try keyring()
    do {
      return try SealedValue.seal(text, using: keyring, context: context)
    } catch let error as TaskCryptoError {
      throw TaskerError.sealingFailed(record: context, cause: error)
    }
  }

  /// Opens a stored body: a plain value comes back unchanged without any
  /// key; a sealed one needs the key that sealed it.
  ///
  /// - Throws: the key source's errors, `TaskerError.sealedBodyUnreadable`
  ///   (never the ciphertext as text).
  func open(_ stored: String, context: String) throws -> String {
    guard SealedValue.isSealed(stored) else { return stored }
    let keyring = try keyring()
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
