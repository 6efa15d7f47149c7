import AssistantKeys
import Dispatch
import FoundationEssentials
import TaskCrypto
import TaskSystem
import TaskVault

/// Checks assistant keys for the gate, failing closed: each check first
/// asks the vault whether it is still unlocked, then has `AssistantKeys`
/// verify the key against the registry (which rereads the registry when
/// another process changed it, so a revocation counts at once).
///
/// Thread-safe; checks run one at a time.
public final class GateAuthenticator: @unchecked Sendable {
  private let vault: Vault?
  private let vaultError: AssistantKeyError?
  private var registry: AssistantKeyRegistry?
  private var unlocked: UnlockedState?
  private let mutex = ThreadLock()

  /// The longest the gate trusts a remembered "unlocked" answer: 1 second.
  public static let lockStateMaximumAge: UInt64 = 1_000_000_000

  /// The last time the vault's full unlock state was read and found
  /// unlocked, and the files that state depends on as they were then.
  private struct UnlockedState {
    let paths: [String]
    let files: [FileIdentity?]
    let readAt: UInt64
    let until: Date?
  }

  /// Prepares to check keys against the vault in `directory`.
  ///
  /// - Parameter directory: the TaskKey vault directory, or nil when the
  ///   environment names none (every check then fails as undecidable).
  public init(vaultDirectory directory: String?) {
    guard let directory else {
      (vault, vaultError) = (nil, .registryDamaged(.integrityKeyUnavailable(reason: "no vault location is set")))
      return
    }
    do {
      (vault, vaultError) = (try Vault(at: directory), nil)
    } catch {
      (vault, vaultError) = (
        nil, .registryDamaged(.integrityKeyUnavailable(reason: "the vault cannot be opened: \(error)"))
      )
    }
  }

  /// Checks a presented key.
  ///
  /// - Parameter presented: the key string exactly as presented.
  /// - Returns: the identity, or the reason it was refused: a key fault
  ///   (`malformedKey`, `badChecksum`, `unknownKey`, `revoked`, `expired`)
  ///   or an undecidable check (`vaultLocked`, `registryDamaged`).
  public func verify(_ presented: String) -> Result<GateIdentity, AssistantKeyError> {
    mutex.lock()
    defer { mutex.unlock() }
    guard let vault else { return .failure(vaultError ?? .vaultLocked) }
    do {
      guard try isUnlocked(vault) else { return .failure(.vaultLocked) }
    } catch {
      return .failure(.registryDamaged(.integrityKeyUnavailable(reason: "the vault cannot be read: \(error)")))
    }
    do {
      let opened = try registry ?? AssistantKeyRegistry(vault: vault)
      registry = opened
      return .success(GateIdentity(try opened.verify(presented)))
    } catch let error as AssistantKeyError {
      return .failure(error)
    } catch TaskVaultError.locked {
      return .failure(.vaultLocked)
    } catch {
      return .failure(.registryDamaged(.integrityKeyUnavailable(reason: "the vault failed: \(error)")))
    }
  }

  /// Whether the vault is unlocked now. Reading the whole unlock state
  /// (vault file, session file, session key) costs about a millisecond, so
  /// the answer "unlocked" is remembered with the identity (device and
  /// inode) of `vault.tkv`, `device-only/unlock.session` and the session key
  /// file (`VaultLayout`'s names), and read again as soon as any of them
  /// changes or goes (every `lock`, `unlock` and passphrase change removes or
  /// replaces them; none is written in place), when a timed unlock ends, and
  /// at least once every `lockStateMaximumAge`. "Locked" is never remembered.
  private func isUnlocked(_ vault: Vault) throws -> Bool {
    let now = DispatchTime.now().uptimeNanoseconds
    if let unlocked, unlocked.files == Self.identities(unlocked.paths),
      now - unlocked.readAt < Self.lockStateMaximumAge,
      unlocked.until.map({ Date() < $0 }) ?? true
    {
      return true
    }
    self.unlocked = nil
    let status = try vault.status()
    guard case .unlocked(let until) = status.lockState else { return false }
    let layout = VaultLayout(directory: vault.directory)
    var paths = [layout.vaultFile, layout.sessionFile]
    if let vaultID = Hex.decode(status.vaultID) {
      paths.append(try layout.sessionKeyFile(in: RuntimeDirectory.sharedMemory(), vaultID: vaultID))
    }
    self.unlocked = UnlockedState(paths: paths, files: Self.identities(paths), readAt: now, until: until)
    return true
  }

  private static func identities(_ paths: [String]) -> [FileIdentity?] {
    paths.map { (try? FileStatus.of($0))?.identity }
  }

  /// Whether a key is still valid by its public id (for approvals made
  /// after the call was queued).
  ///
  /// - Parameter keyID: the key's public id.
  /// - Throws: `GateError.keyNoLongerValid` when it is revoked, expired or
  ///   unknown; `GateError.keyRefused` when the registry cannot be read.
  public func checkStillValid(_ keyID: String) throws {
    mutex.lock()
    defer { mutex.unlock() }
    guard let vault else { throw GateError.keyRefused(vaultError ?? .vaultLocked) }
    let records: [AssistantKeyRecord]
    do {
      let opened = try registry ?? AssistantKeyRegistry(vault: vault)
      registry = opened
      records = try opened.keys()
    } catch let error as AssistantKeyError {
      throw GateError.keyRefused(error)
    } catch TaskVaultError.locked {
      throw GateError.keyRefused(.vaultLocked)
    }
    guard let record = records.first(where: { $0.id.text == keyID }) else {
      throw GateError.keyNoLongerValid(keyID: keyID, status: "unknown")
    }
    switch record.status {
    case .active, .overlapping: return
    case .revoked, .expired: throw GateError.keyNoLongerValid(keyID: keyID, status: record.status.word)
    }
  }
}
