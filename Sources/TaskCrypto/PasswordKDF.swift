import CSodium

/// Passphrase-based key derivation with Argon2id version 1.3 (RFC 9106),
/// through libsodium's `crypto_pwhash` with `ALG_ARGON2ID13`.
///
/// libsodium fixes the parallelism at 1 lane; the cost is set by the
/// number of passes (`opsLimit`, Argon2's `t`) and the memory in KiB
/// (Argon2's `m`). The passphrase is read from locked memory and the
/// derived bytes are written straight into locked memory; neither passes
/// through a Swift `String` or `Array`.
public enum PasswordKDF {
  /// Salt size in bytes: 16 (`crypto_pwhash_SALTBYTES`).
  public static let saltByteCount = 16
  /// The fewest passes accepted: 1 (`crypto_pwhash_argon2id_OPSLIMIT_MIN`).
  public static let minimumOpsLimit: UInt32 = 1
  /// The most passes accepted: 64. Anything above is refused before any
  /// work starts, so a hostile file cannot make a reader spin for hours.
  public static let maximumOpsLimit: UInt32 = 64
  /// The least memory accepted: 8 KiB (`crypto_pwhash_argon2id_MEMLIMIT_MIN`).
  public static let minimumMemoryKiB: UInt32 = 8
  /// The most memory accepted: 4 GiB, refused before allocation.
  public static let maximumMemoryKiB: UInt32 = 4 << 20
  /// The longest passphrase accepted: 1024 bytes.
  public static let maximumPassphraseByteCount = 1024
  /// The largest output accepted: 256 bytes (TaskKey uses 32 and 64; the
  /// rest is for known-answer tests).
  public static let maximumOutputByteCount = 256

  /// Argon2id cost parameters.
  public struct Parameters: Sendable, Equatable, CustomStringConvertible {
    /// The number of passes over memory (Argon2 `t`).
    public let opsLimit: UInt32
    /// The memory in KiB (Argon2 `m`).
    public let memoryKiB: UInt32

    /// Pairs the two costs; `validate()` checks them against the caps.
    public init(opsLimit: UInt32, memoryKiB: UInt32) {
      self.opsLimit = opsLimit
      self.memoryKiB = memoryKiB
    }

    /// Checks the parameters against this build's minimums and caps.
    ///
    /// - Throws: `TaskCryptoError.invalidKDFParameters` naming the limit.
    public func validate() throws {
      guard opsLimit >= PasswordKDF.minimumOpsLimit, opsLimit <= PasswordKDF.maximumOpsLimit else {
        throw TaskCryptoError.invalidKDFParameters(
          reason: "\(opsLimit) passes is outside \(PasswordKDF.minimumOpsLimit)...\(PasswordKDF.maximumOpsLimit)")
      }
      guard memoryKiB >= PasswordKDF.minimumMemoryKiB, memoryKiB <= PasswordKDF.maximumMemoryKiB else {
        throw TaskCryptoError.invalidKDFParameters(
          reason:
            "\(memoryKiB) KiB of memory is outside \(PasswordKDF.minimumMemoryKiB)...\(PasswordKDF.maximumMemoryKiB) KiB"
        )
      }
    }

    /// `Argon2id(t=<passes>, m=<MiB or KiB>, p=1)`.
    public var description: String {
      let memory = memoryKiB % 1024 == 0 ? "\(memoryKiB / 1024) MiB" : "\(memoryKiB) KiB"
      return "Argon2id(t=\(opsLimit), m=\(memory), p=1)"
    }
  }

  /// Derives `byteCount` bytes from `passphrase` and `salt` into locked
  /// memory.
  ///
  /// The parameters are checked against the caps before any memory is
  /// asked for, so costs read from a file can be passed in as they are.
  ///
  /// - Parameters:
  ///   - passphrase: the passphrase bytes, 1 to 1024 bytes.
  ///   - salt: exactly `saltByteCount` bytes.
  ///   - parameters: the Argon2id costs.
  ///   - byteCount: 16 to 256 output bytes.
  /// - Returns: the derived bytes in locked memory.
  /// - Throws: `TaskCryptoError.invalidKDFParameters` for costs, salt,
  ///   passphrase or output sizes out of range; `.resourceUnavailable` when
  ///   the memory cannot be had.
  public static func deriveBytes(
    from passphrase: SecureBytes,
    salt: [UInt8],
    parameters: Parameters,
    byteCount: Int
  ) throws -> SecureBytes {
    try parameters.validate()
    guard salt.count == saltByteCount else {
      throw TaskCryptoError.invalidKDFParameters(reason: "salt of \(salt.count) bytes; expected \(saltByteCount)")
    }
    guard byteCount >= 16, byteCount <= maximumOutputByteCount else {
      throw TaskCryptoError.invalidKDFParameters(
        reason: "output of \(byteCount) bytes is outside 16...\(maximumOutputByteCount)")
    }
    guard passphrase.count >= 1, passphrase.count <= maximumPassphraseByteCount else {
      throw TaskCryptoError.invalidKDFParameters(
        reason: "passphrase of \(passphrase.count) bytes is outside 1...\(maximumPassphraseByteCount)")
    }
    ensureSodium()
    let output = try SecureBytes(zeroedCount: byteCount)
    let result = output.withUnsafeMutableBytes { out in
      passphrase.withUnsafeBytes { pass in
        salt.withUnsafeBufferPointer { saltBytes in
          crypto_pwhash(
            out.bindMemory(to: UInt8.self).baseAddress!, UInt64(byteCount),
            pass.bindMemory(to: CChar.self).baseAddress!, UInt64(pass.count),
            saltBytes.baseAddress!, UInt64(parameters.opsLimit), Int(parameters.memoryKiB) * 1024,
            Int32(crypto_pwhash_argon2id_ALG_ARGON2ID13))
        }
      }
    }
    guard result == 0 else {
      throw TaskCryptoError.resourceUnavailable("memory for Argon2id (\(parameters))")
    }
    return output
  }

  /// Derives a 256-bit key, as `deriveBytes` with 32 output bytes.
  ///
  /// - Throws: as `deriveBytes(from:salt:parameters:byteCount:)`.
  public static func deriveKey(from passphrase: SecureBytes, salt: [UInt8], parameters: Parameters) throws
    -> SymmetricKey
  {
    SymmetricKey(checked: try deriveBytes(from: passphrase, salt: salt, parameters: parameters, byteCount: 32))
  }
}
