import Foundation
import TaskCrypto

/// How a vault's Argon2id costs were chosen; recorded in the vault file and
/// authenticated with the rest of its header.
public enum KDFPreset: UInt8, Sendable, Equatable {
  /// Calibrated on the machine at `init` to about half a second, never
  /// below 64 MiB and 3 passes (RFC 9106's second recommended option; above
  /// every OWASP Argon2id minimum).
  case calibrated = 1
  /// The fast preset for tests and vectors only: 1 pass over 8 MiB.
  /// `status` says so; never use it for real secrets.
  case fastTestOnly = 2

  /// The name shown by `status`.
  public var rawName: String {
    switch self {
    case .calibrated: return "calibrated"
    case .fastTestOnly: return "fast-test-only (NOT FOR REAL SECRETS)"
    }
  }
}

/// Argon2id cost choice and the rules a vault file's costs must meet.
public enum VaultKDF {
  /// The exact costs of the fast test preset: t=1, m=8 MiB.
  public static let fastTestParameters = PasswordKDF.Parameters(opsLimit: 1, memoryKiB: 8 << 10)
  /// The floor of calibrated costs, RFC 9106's second recommended option
  /// (t=3, m=64 MiB): also above the OWASP minimums.
  public static let minimumCalibrated = PasswordKDF.Parameters(opsLimit: 3, memoryKiB: 64 << 10)
  /// Calibration never picks more memory than this: 1 GiB.
  public static let calibrationMemoryCapKiB: UInt32 = 1 << 20
  /// Calibration never picks more passes than this: 16.
  public static let calibrationOpsCap: UInt32 = 16
  /// The most memory a vault file may ask for: 4 GiB (checked before use).
  public static let readMemoryCapKiB: UInt32 = PasswordKDF.maximumMemoryKiB
  /// The most passes a vault file may ask for: 64 (checked before use).
  public static let readOpsCap: UInt32 = PasswordKDF.maximumOpsLimit

  /// Checks costs read from a file against the rules for their preset,
  /// before any work is done.
  ///
  /// - Throws: a reason string when the costs break a rule.
  static func check(_ parameters: PasswordKDF.Parameters, preset: KDFPreset) -> String? {
    switch preset {
    case .fastTestOnly:
      guard parameters == fastTestParameters else { return "fast-test preset with costs other than t=1, m=8 MiB" }
    case .calibrated:
      guard parameters.opsLimit >= minimumCalibrated.opsLimit, parameters.memoryKiB >= minimumCalibrated.memoryKiB
      else { return "calibrated costs \(parameters) below the floor \(minimumCalibrated)" }
      guard parameters.opsLimit <= readOpsCap, parameters.memoryKiB <= readMemoryCapKiB else {
        return "costs \(parameters) above the caps t<=\(readOpsCap), m<=4 GiB"
      }
    }
    return nil
  }

  /// Measures Argon2id at the floor and scales memory, then passes, so one
  /// derivation takes about `target` on this machine; never below the
  /// floor, never above 1 GiB, a quarter of physical memory or 16 passes.
  ///
  /// - Parameter target: the wanted time of one derivation (0.5 s at `init`).
  /// - Returns: the chosen costs.
  /// - Throws: `TaskVaultError.crypto` when the measurement cannot run.
  public static func calibrate(target: Duration = .milliseconds(500)) throws -> PasswordKDF.Parameters {
    let probe = try SecureBytes.random(count: 16)
    let salt = [UInt8](repeating: 0, count: PasswordKDF.saltByteCount)
    let clock = ContinuousClock()
    let elapsed = try clock.measure {
      _ = try wrapCrypto {
        try PasswordKDF.deriveBytes(from: probe, salt: salt, parameters: minimumCalibrated, byteCount: 32)
      }
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let targetSeconds = Double(target.components.seconds) + Double(target.components.attoseconds) / 1e18
    let factor = max(1, targetSeconds / max(seconds, 1e-4))
    let pages = sysconf(Int32(_SC_PHYS_PAGES))
    let pageSize = sysconf(Int32(_SC_PAGESIZE))
    let quarterKiB =
      pages > 0 && pageSize > 0 ? UInt64(pages) * UInt64(pageSize) / 4096 : UInt64(calibrationMemoryCapKiB)
    let memoryCap = max(UInt64(minimumCalibrated.memoryKiB), min(UInt64(calibrationMemoryCapKiB), quarterKiB))
    let wantedMemory = Double(minimumCalibrated.memoryKiB) * factor
    let memory = min(UInt64(wantedMemory) / 1024 * 1024, memoryCap)
    let remaining = wantedMemory / Double(memory)
    let ops = min(UInt64(calibrationOpsCap), max(UInt64(minimumCalibrated.opsLimit), UInt64(3 * remaining)))
    return PasswordKDF.Parameters(opsLimit: UInt32(ops), memoryKiB: UInt32(max(memory, 64 << 10)))
  }
}

/// Runs a TaskCrypto call, wrapping its error.
func wrapCrypto<T>(_ body: () throws -> T) throws -> T {
  do {
    return try body()
  } catch let error as TaskCryptoError {
    throw TaskVaultError.crypto(error)
  }
}
