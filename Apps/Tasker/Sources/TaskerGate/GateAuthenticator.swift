import AssistantKeys
import Dispatch
import TaskSystem
import TaskVault

/// Checks assistant keys for the gate, failing closed: each check first
/// asks the vault whether it is still unlocked, then has `AssistantKeys`
/// verify the key against the registry (which rereads the registry when
/// another process changed it, so a revocation counts at once).
///
/// Thread-safe: the state a check reads (the remembered unlock state, the
/// registry) is kept in `lanes`, one per server thread by default, each
/// behind its own lock, so threads checking at once do not wait for each
/// other. Every lane checks alike; none trusts what another remembered.
public final class GateAuthenticator: @unchecked Sendable {
  private let vault: Vault?
  private let vaultError: AssistantKeyError?
  private let lanes: [Lane]

  /// One lane's state, used only while its lock is held.
  private final class Lane {
    let mutex = ThreadLock()
    var registry: AssistantKeyRegistry?
    var unlocked: UnlockedState?
  }

  /// The longest the gate trusts a remembered "unlocked" answer: 1 second.
  public static let lockStateMaximumAge: UInt64 = 1_000_000_000

  /// The last full read of the vault's unlock state that found it
  /// unlocked, and when it was read.
  private struct UnlockedState {
    let stamp: UnlockStamp
    let readAt: UInt64
    /// A watch of the stamp's directories, made before a check that found
    /// the stamp still true; nil once it saw a change and until it is made
    /// again (the files are then examined each time).
    var watch: DirectoryWatch?
  }

  /// Prepares to check keys against the vault in `directory`.
  ///
  /// - Parameters:
  ///   - directory: the TaskKey vault directory, or nil when the
  ///     environment names none (every check then fails as undecidable).
  ///   - lanes: how many checks may run at once (the HTTP server's threads).
  public init(vaultDirectory directory: String?, lanes: Int = 4) {
    self.lanes = (0..<max(1, lanes)).map { _ in Lane() }
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
    let lane = takeLane()
    defer { lane.mutex.unlock() }
    guard let vault else { return .failure(vaultError ?? .vaultLocked) }
    do {
      guard try isUnlocked(vault, lane: lane) else { return .failure(.vaultLocked) }
    } catch {
      return .failure(.registryDamaged(.integrityKeyUnavailable(reason: "the vault cannot be read: \(error)")))
    }
    do {
      let opened = try lane.registry ?? AssistantKeyRegistry(vault: vault)
      lane.registry = opened
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
  /// costs about a millisecond, so the answer "unlocked" is remembered as
  /// TaskVault's `UnlockStamp` and confirmed with
  /// `Vault.isStillUnlocked(since:)` (a few `lstat` calls: every `lock`,
  /// `unlock`, passphrase change and reboot replaces or removes a file the
  /// stamp names, and a timed unlock ends by itself), and read again at
  /// least once every `lockStateMaximumAge`. "Locked" is never remembered.
  ///
  /// Between those reads a `DirectoryWatch` of the stamp's directories
  /// answers without a file examined, while it saw nothing change. It is
  /// made after the stamp and before an `lstat` check of it, so a change
  /// before the watch existed is seen by the check and every later one by
  /// the watch; once it saw a change, the files are examined and, if the
  /// stamp still holds, a new watch is made the same way. A directory on a
  /// network file system is not watched for another machine's changes:
  /// those are seen at the next full read, within `lockStateMaximumAge`.
  private func isUnlocked(_ vault: Vault, lane: Lane) throws -> Bool {
    let now = DispatchTime.now().uptimeNanoseconds
    if var unlocked = lane.unlocked, now - unlocked.readAt < Self.lockStateMaximumAge,
      vault.isStillUnlocked(since: unlocked.stamp, watchedBy: unlocked.watch)
    {
      // A watch that could not be made is tried again at the next full read.
      if let watch = unlocked.watch, watch.sawChange() {
        unlocked.watch = Self.watch(unlocked.stamp, of: vault)
        lane.unlocked = unlocked
      }
      return true
    }
    lane.unlocked = nil
    guard let stamp = try vault.unlockStamp() else { return false }
    lane.unlocked = UnlockedState(stamp: stamp, readAt: now, watch: Self.watch(stamp, of: vault))
    return true
  }

  /// A lane no other thread holds, locked; when every lane is held, waits
  /// for the first.
  private func takeLane() -> Lane {
    for lane in lanes where lane.mutex.tryLock() { return lane }
    lanes[0].mutex.lock()
    return lanes[0]
  }

  /// A watch of `stamp`'s directories, if one can be made and the stamp
  /// still holds once it exists; nil otherwise (the files are examined).
  private static func watch(_ stamp: UnlockStamp, of vault: Vault) -> DirectoryWatch? {
    DirectoryWatch.confirming(stamp.directories) { vault.isStillUnlocked(since: stamp, watchedBy: nil) }
  }

  /// Whether a key is still valid by its public id (for approvals made
  /// after the call was queued).
  ///
  /// - Parameter keyID: the key's public id.
  /// - Throws: `GateError.keyNoLongerValid` when it is revoked, expired or
  ///   unknown; `GateError.keyRefused` when the registry cannot be read.
  public func checkStillValid(_ keyID: AssistantKeyID) throws {
    let lane = takeLane()
    defer { lane.mutex.unlock() }
    guard let vault else { throw GateError.keyRefused(vaultError ?? .vaultLocked) }
    let records: [AssistantKeyRecord]
    do {
      let opened = try lane.registry ?? AssistantKeyRegistry(vault: vault)
      lane.registry = opened
      records = try opened.keys()
    } catch let error as AssistantKeyError {
      throw GateError.keyRefused(error)
    } catch TaskVaultError.locked {
      throw GateError.keyRefused(.vaultLocked)
    }
    guard let record = records.first(where: { $0.id == keyID }) else {
      throw GateError.keyNoLongerValid(keyID: keyID.text, status: "unknown")
    }
    switch record.status {
    case .active, .overlapping: return
    case .revoked, .expired: throw GateError.keyNoLongerValid(keyID: keyID.text, status: record.status.word)
    }
  }
}
