import FoundationEssentials
import TaskCrypto

/// How a passphrase becomes the bytes the KDF reads
/// (docs/formats/vault-file.md, "Passphrase bytes"): valid UTF-8 that holds a
/// non-ASCII byte is put in Unicode Normalization Form C, so the same
/// passphrase typed on keyboards that compose characters differently (é as
/// one scalar or as e and a combining accent) opens the same vault; ASCII,
/// and bytes that are not UTF-8, are used as they are.
public enum PassphraseBytes {
  /// The KDF input for `passphrase`, in locked memory.
  ///
  /// The normalisation reads the passphrase through a Swift `String`,
  /// which cannot be wiped; only passphrases with a non-ASCII byte take that path
  /// (SECURITY.md, "Secrets in memory").
  ///
  /// - Throws: `TaskVaultError.passphraseTooLong` when normalising makes it
  ///   longer than 1024 bytes; `.crypto` when locked memory is refused.
  public static func kdfInput(_ passphrase: SecureBytes) throws -> SecureBytes {
    let needsNormalising = passphrase.withUnsafeBytes { raw in
      raw.contains { $0 >= 0x80 } && String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self) != nil
    }
    guard needsNormalising else { return passphrase }
    // NFC from the Swift standard library (the normalisation String
    // comparison uses), not Foundation's: linking Foundation's copy costs
    // every `taskkey` process ~0.6 ms of start-up (issue 14, goal 6). The
    // composed bytes are counted, then written straight into locked memory.
    let decoded = passphrase.withUnsafeBytes { raw in
      String(decoding: raw.bindMemory(to: UInt8.self), as: UTF8.self)
    }
    var count = 0
    decoded._withNFCCodeUnits { _ in count += 1 }
    guard count <= VaultLimits.maximumPassphraseByteCount else {
      throw TaskVaultError.passphraseTooLong(limit: VaultLimits.maximumPassphraseByteCount)
    }
    let composed = try wrapCrypto { try SecureBytes(zeroedCount: count) }
    composed.withUnsafeMutableBytes { buffer in
      var index = 0
      decoded._withNFCCodeUnits { byte in
        buffer[index] = byte
        index += 1
      }
    }
    return composed
  }
}
