import AssistantKeys
import Foundation
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
  private let mutex = NSLock()

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
      guard case .unlocked = try vault.status().lockState else { return .failure(.vaultLocked) }
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
