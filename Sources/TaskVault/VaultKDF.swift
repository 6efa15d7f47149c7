import FoundationEssentials
import TaskCrypto
import TaskSystem

/// How a vault's Argon2id costs were chosen; recorded in the vault file and
/// authenticated with the rest of its header.
public enum KDFPreset: UInt8, Sendable, Equatable {
  /// Fixed memory (128 MiB) and passes calibrated on the machine at `init`
  /// to about half a second of CPU, never below 3 (SECURITY.md, "Passphrase
  /// KDF"); at least RFC 9106's second recommended option (t=3, m=64 MiB).
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
  /// The memory every calibrated vault uses: 128 MiB, fixed, so a vault
  /// or bundle made on a desktop opens on a small laptop, and twice RFC
  /// 9106's second recommended option.
  public static let calibratedMemoryKiB: UInt32 = 128 << 10
  /// The pass counts calibration chooses from: each step doubles, so a
  /// machine whose measurements vary by less than a factor of two around
  /// the middle of its step gets the same count init after init.
  public static let passSteps: [UInt32] = [3, 6, 12]
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

  /// Chooses the passes at the fixed 128 MiB so that one derivation takes
  /// at most `target` of CPU time on this machine: the largest step of
  /// `passSteps` that fits, never fewer than 3.
  ///
  /// A derivation at 3 passes is measured twice in CPU time of this thread
  /// and the lesser third is the cost of a pass, so load from other
  /// processes does not lower the count, and the doubling steps absorb the
  /// rest of the noise.
  ///
  /// - Parameter target: the most CPU time one derivation may take (0.64 s
  ///   at `init`; unlock then stays well under a second).
  /// - Returns: the chosen costs.
  /// - Throws: `TaskVaultError.crypto` when the measurement cannot run.
  public static func calibrate(target: Duration = .milliseconds(640)) throws -> PasswordKDF.Parameters {
    let probe = try SecureBytes.random(count: 16)
    let salt = [UInt8](repeating: 0, count: PasswordKDF.saltByteCount)
    let threePasses = PasswordKDF.Parameters(opsLimit: 3, memoryKiB: calibratedMemoryKiB)
    var least = UInt64.max
    for _ in 0..<2 {
      let start = CPUClock.threadNanoseconds()
      _ = try wrapCrypto {
        try PasswordKDF.deriveBytes(from: probe, salt: salt, parameters: threePasses, byteCount: 32)
      }
      least = min(least, CPUClock.threadNanoseconds() - start)
    }
    let targetNanoseconds = Double(target.components.seconds) * 1e9 + Double(target.components.attoseconds) / 1e9
    return PasswordKDF.Parameters(
      opsLimit: passes(forTarget: targetNanoseconds, perPass: Double(least) / 3), memoryKiB: calibratedMemoryKiB)
  }

  /// The largest step of `passSteps` whose time fits `target`, at least 3.
  static func passes(forTarget target: Double, perPass: Double) -> UInt32 {
    let fitting = target / max(perPass, 1)
    return passSteps.last { Double($0) <= fitting } ?? passSteps[0]
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
